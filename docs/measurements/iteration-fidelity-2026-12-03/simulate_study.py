import yaml, json, subprocess, itertools, copy
d=yaml.safe_load(open('/work/wt/r-fid/scenarios/study-compression-v100.yaml'))
z=d['zip'][0]; out=[]
for i,(m,b,o) in enumerate(zip(z['workload.model'],z['workload.micro_batch'],z['workload.optimizer'])):
  for bw in d['axes']['cluster.nics.bandwidth']:
    for c in d['axes']['workload.compression']:
      s=copy.deepcopy(d['base']); s['workload'].update(model=m,micro_batch=b,optimizer=o,compression=c); s['cluster']['nics']['bandwidth']=bw
      p=f'stp/p.yaml'; yaml.safe_dump(s,open(p,'w'))
      r=subprocess.run(['/work/main/build/bin/gradwire','simulate',p,'--format','json','--allow-oversubscribed-memory'],capture_output=True,text=True)
      if r.returncode: print(m,b,bw,c,r.stderr[:200]); continue
      j=json.loads(r.stdout); j.pop('tensor_end_s',None); j.pop('tensor_names',None)
      out.append(dict(model=m,batch=b,gbps=float(bw[:-4]),comp=c['kind'],sim=j))
json.dump(out,open('study-parts.json','w'))
