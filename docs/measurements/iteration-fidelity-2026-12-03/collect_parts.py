import yaml, os, sys, json, subprocess, glob
root='/work/wt/r-fid/validation/iterations'
out='/tmp/r-fid/sc'
res={}
def scen(setting, tag):
    cl=os.path.normpath(os.path.join(root, setting['cluster']))
    d=yaml.safe_load(open(cl))
    d['workload']=setting['workload']
    # profile/model paths relative: put file next to cluster file? write in validation/clusters dir's sibling
    p=os.path.join(os.path.dirname(cl), f'.rfid-{tag}.yaml')
    p=os.path.join(out, tag+'.yaml')
    yaml.safe_dump(d, open(p,'w'))
    return p
for f in sorted(glob.glob(root+'/*.yaml')):
    c=yaml.safe_load(open(f))
    name=c['case']
    r={'case':name,'file':f}
    for k in ('scenario','baseline'):
        if k in c:
            p=scen(c[k], name+'-'+k)
            pr=subprocess.run(['/work/main/build/bin/gradwire','simulate',p,'--format','json','--allow-oversubscribed-memory'],capture_output=True,text=True)
            if pr.returncode: print(name,k,pr.stderr[:300]); continue
            r[k]=json.loads(pr.stdout)
    res[name]=r
json.dump(res,open('/tmp/r-fid/parts.json','w'),indent=1)
