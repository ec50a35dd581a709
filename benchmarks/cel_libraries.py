import time, sys
EXPRS = [
 ('device.driver == "gpu.example.com"', True),
 ('device.attributes["gpu.example.com"].model == "A100"', True),
 ('device.attributes["gpu.example.com"].cores > 4', True),
 ('device.attributes["gpu.example.com"].vip', False),
 ('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0', True),
 ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', False),
 ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("81Gi"))', True),
 ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))', True),
 ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("2.0.0")) < 0', True),
 ('"gpu.example.com" in device.attributes', True),
 ('"other" in device.attributes', False),
 ('device.attributes["gpu.example.com"].model.startsWith("A1") && device.attributes["gpu.example.com"].cores <= 8', True),
]
GI = 1024**3
def parse_q(s):
    mult = {"Ki":1024,"Mi":1024**2,"Gi":GI,"Ti":1024**4,"k":1000,"M":10**6,"G":10**9,"":1}
    for suf in sorted(mult, key=len, reverse=True):
        if suf and s.endswith(suf): return int(s[:-len(suf)])*mult[suf]
    return int(s)
def parse_v(s): return tuple(int(x) for x in s.split("."))
which = sys.argv[1]
N = 2000
if which == "rust":
    import cel
    class Q: pass
    # quantity/semver as tagged maps
    def quantity(s): return {"__q": parse_q(s)}
    def semver(s): return {"__v": list(parse_v(s))}
    def cmp(a, b):
        ka = a.get("__q", a.get("__v")); kb = b.get("__q", b.get("__v"))
        return (ka > kb) - (ka < kb)
    funcs = {"quantity": quantity, "semver": semver, "compareTo": cmp,
             "isGreaterThan": lambda a,b: cmp(a,b) > 0, "isLessThan": lambda a,b: cmp(a,b) < 0}
    device = {"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"model": "A100", "cores": 8, "vip": False, "driverVersion": {"__v": [1,2,3]}}}, "capacity": {"gpu.example.com": {"memory": {"__q": 80*GI}}}}
    progs = []
    t = time.perf_counter()
    for e, want in EXPRS:
        try:
            progs.append(cel.compile(e))
        except Exception as ex:
            print("COMPILE FAIL", e, ex); progs.append(None)
    tc = (time.perf_counter()-t)/len(EXPRS)
    ctx = cel.Context(variables={"device": device}, functions=funcs)
    ok = 0
    for (e, want), p in zip(EXPRS, progs):
        try:
            got = p.execute(ctx)
            if got == want: ok += 1
            else: print("WRONG", e, got)
        except Exception as ex: print("ERR", e, ex)
    t = time.perf_counter()
    for i in range(N):
        for p in progs:
            ctx = cel.Context(variables={"device": device}, functions=funcs)
            p.execute(ctx)
    te = (time.perf_counter()-t)/N/len(progs)
    # missing key
    try: print("missing:", cel.compile('device.attributes["x"].y').execute(ctx))
    except Exception as ex: print("missing err:", type(ex).__name__, ex)
else:
    import celpy
    from celpy import celtypes
    class Quantity(celtypes.IntType): pass
    class Semver(celtypes.TupleType if hasattr(celtypes,'TupleType') else tuple): pass
    def quantity(s): return Quantity(parse_q(str(s)))
    class SV:
        def __init__(s, t): s.t = t
    def semver(s): return SV(parse_v(str(s)))
    def key(a): return a.t if isinstance(a, SV) else int(a)
    def cmp(a, b): return celtypes.IntType((key(a) > key(b)) - (key(a) < key(b)))
    funcs = {"quantity": quantity, "semver": semver, "compareTo": cmp,
             "isGreaterThan": lambda a,b: celtypes.BoolType(cmp(a,b) > 0), "isLessThan": lambda a,b: celtypes.BoolType(cmp(a,b) < 0)}
    env = celpy.Environment()
    device = celpy.json_to_cel({"driver": "gpu.example.com", "attributes": {"gpu.example.com": {"model": "A100", "cores": 8, "vip": False}}, "capacity": {}})
    device[celtypes.StringType("attributes")][celtypes.StringType("gpu.example.com")][celtypes.StringType("driverVersion")] = SV((1,2,3))
    device[celtypes.StringType("capacity")][celtypes.StringType("gpu.example.com")] = celtypes.MapType({celtypes.StringType("memory"): Quantity(80*GI)})
    progs = []
    t = time.perf_counter()
    for e, want in EXPRS:
        try:
            progs.append(env.program(env.compile(e), functions=funcs))
        except Exception as ex:
            print("COMPILE FAIL", e, ex); progs.append(None)
    tc = (time.perf_counter()-t)/len(EXPRS)
    ok = 0
    for (e, want), p in zip(EXPRS, progs):
        try:
            got = p.evaluate({"device": device})
            if got == want: ok += 1
            else: print("WRONG", e, got)
        except Exception as ex: print("ERR", e, ex)
    N = 200
    t = time.perf_counter()
    for i in range(N):
        for p in progs:
            p.evaluate({"device": device})
    te = (time.perf_counter()-t)/N/len(progs)
    try: print("missing:", progs[0] and env.program(env.compile('device.attributes["x"].y')).evaluate({"device": device}))
    except Exception as ex: print("missing err:", type(ex).__name__, ex)
print(f"{which}: correct {ok}/{len(EXPRS)}; compile {tc*1e6:.0f} us/expr; eval {te*1e6:.1f} us/eval (incl. context build)")
if which == "rust":
    ctx = cel.Context(variables={"device": device}, functions=funcs)
    t = time.perf_counter()
    for i in range(N):
        for p in progs: p.execute(ctx)
    print(f"rust reused ctx: {(time.perf_counter()-t)/N/len(progs)*1e6:.1f} us/eval")
    t = time.perf_counter()
    for i in range(N): cel.Context(variables={"device": device}, functions=funcs)
    print(f"rust ctx build: {(time.perf_counter()-t)/N*1e6:.1f} us")
