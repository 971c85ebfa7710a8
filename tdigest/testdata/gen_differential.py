# Records a t-digest differential transcript from the real RedisBloom 8.6.2.
import socket, random, json, gzip, sys, math
port = int(sys.argv[1]); out = sys.argv[2]
s = socket.create_connection(("127.0.0.1", port)); f = s.makefile("rb")
def enc(args):
    b = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        b += b"$%d\r\n%s\r\n" % (len(a), a)
    return b
def rd():
    l = f.readline()[:-2]; t = l[:1]; r = l[1:]
    if t == b"+": return {"simple": r.decode()}
    if t == b"-": return {"error": r.decode()}
    if t == b":": return int(r)
    if t == b"$":
        n = int(r)
        if n < 0: return None
        d = f.read(n + 2)[:-2]; return d.decode()
    if t == b"*":
        n = int(r)
        if n < 0: return None
        return [rd() for _ in range(n)]
    raise Exception(l)
cmds = []
def do(*args):
    args = [str(a) for a in args]
    s.sendall(enc(args)); r = rd(); cmds.append({"args": args, "reply": r}); return r
rng = random.Random(23)
def val(kind):
    if kind == "uniform": return "%.6f" % rng.uniform(-1000, 1000)
    if kind == "normal": return repr(rng.gauss(0, 1))
    if kind == "lognormal": return repr(rng.lognormvariate(0, 2))
    if kind == "ints": return str(rng.randint(0, 20))          # heavy ties
    if kind == "tiny": return repr(rng.uniform(-1, 1) * 1e-300)
    if kind == "sorted": return None
qs = ["0", "0.001", "0.01", "0.1", "0.25", "0.5", "0.75", "0.9", "0.99", "0.999", "1"]
for comp, kind in [(20, "uniform"), (100, "normal"), (500, "lognormal"), (100, "ints"), (37, "tiny"), (100, "sorted")]:
    k = "k-%d-%s" % (comp, kind)
    do("TDIGEST.CREATE", k, "COMPRESSION", comp)
    cnt = 0
    for batch in range(60):
        n = rng.randint(1, 400)
        if kind == "sorted":
            vals = [str(cnt + i) for i in range(n)]
        else:
            vals = [val(kind) for _ in range(n)]
        cnt += n
        do("TDIGEST.ADD", k, *vals)
        if batch % 7 == 3:
            do("TDIGEST.QUANTILE", k, *qs)
            do("TDIGEST.CDF", k, *[vals[i] for i in range(0, len(vals), max(1, len(vals)//5))])
            do("TDIGEST.RANK", k, *vals[:5]); do("TDIGEST.REVRANK", k, *vals[:5])
            do("TDIGEST.BYRANK", k, 0, 1, cnt // 3, cnt - 1, cnt)
            do("TDIGEST.BYREVRANK", k, 0, 1, cnt // 3, cnt - 1, cnt)
            do("TDIGEST.TRIMMED_MEAN", k, "0.05", "0.95")
            do("TDIGEST.INFO", k)
    do("TDIGEST.QUANTILE", k, "0.9", "0.1", "0.5", "0.99", "0.2")
    do("TDIGEST.INFO", k)
do("TDIGEST.MERGE", "m1", 3, "k-20-uniform", "k-100-normal", "k-500-lognormal")
do("TDIGEST.QUANTILE", "m1", *qs); do("TDIGEST.INFO", "m1")
do("TDIGEST.MERGE", "m1", 2, "k-100-ints", "m1", "COMPRESSION", 60)
do("TDIGEST.QUANTILE", "m1", *qs); do("TDIGEST.CDF", "m1", 0, 1, 5, 10.5); do("TDIGEST.INFO", "m1")
do("TDIGEST.CREATE", "one"); do("TDIGEST.ADD", "one", 7)
do("TDIGEST.QUANTILE", "one", 0, 0.5, 1); do("TDIGEST.CDF", "one", 6, 7, 8); do("TDIGEST.RANK", "one", 7); do("TDIGEST.INFO", "one")
do("TDIGEST.ADD", "one", 7); do("TDIGEST.CDF", "one", 6, 7, 8); do("TDIGEST.TRIMMED_MEAN", "one", 0, 1); do("TDIGEST.INFO", "one")
do("TDIGEST.CREATE", "huge"); do("TDIGEST.ADD", "huge", "-1.7e308", "1.7e308", "1.6e308", "-1e308")
do("TDIGEST.QUANTILE", "huge", 0, 0.3, 0.5, 1); do("TDIGEST.CDF", "huge", 0); do("TDIGEST.INFO", "huge")
json.dump([{"name": "differential", "commands": cmds}], gzip.open(out, "wt"))
print(len(cmds))
