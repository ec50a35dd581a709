"""CEL libraries for DRA device selectors: ``common-expression-language`` (Rust bindings, the one
kubesched uses) vs ``cel-python`` (pure Python), on the selector forms upstream's DRA tests use
(string / int / bool / version attributes, ``device.driver``, quantity capacity with
``compareTo(quantity(...))``, ``isGreaterThan``/``isLessThan``, semver, ``in``).

Prints, per library: how many expressions evaluate to the expected value, compile time per
expression, evaluation time per expression (context built once per device, as
``kubesched.plugins.dra_cel`` does; for cel-python the activation is passed per call).

    PYTHONPATH=src python benchmarks/cel_libraries.py            # both, when both are installed
    pip install cel-python                                      # to compare (not a kubesched dependency)
"""

from __future__ import annotations

import time
from typing import Any

EXPRS: list[tuple[str, bool]] = [
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
    ('device.attributes["gpu.example.com"].model.startsWith("A1") && device.attributes["gpu.example.com"].cores <= 8',
     True),
]
DEVICE = {"name": "gpu-0", "attributes": {"model": {"string": "A100"}, "cores": {"int": 8}, "vip": {"bool": False},
                                          "driverVersion": {"version": "1.2.3"}},
          "capacity": {"memory": {"value": "80Gi"}}}
N = 2000


def bench_rust() -> str:
    from kubesched.plugins.dra_cel import compile_selector, device_context

    t = time.perf_counter()
    progs = [compile_selector(e + " ") for e, _ in EXPRS]  # a fresh compile (the cache is keyed by text)
    compile_us = (time.perf_counter() - t) / len(EXPRS) * 1e6
    ctx = device_context("gpu.example.com", DEVICE)
    ok = sum(1 for p, (_, want) in zip(progs, EXPRS, strict=True) if p.matches(ctx) is want)
    t = time.perf_counter()
    for _ in range(N):
        for p in progs:
            p.matches(ctx)
    eval_us = (time.perf_counter() - t) / N / len(progs) * 1e6
    return (f"common-expression-language: {ok}/{len(EXPRS)} correct, compile {compile_us:.0f} µs/expr, "
            f"eval {eval_us:.1f} µs")


def bench_celpy() -> str:
    import celpy  # type: ignore[import-not-found]
    from celpy import celtypes  # type: ignore[import-not-found]

    from kubesched.api.quantity import nano_value
    from kubesched.plugins.dra_cel import semver_key

    class Quantity(celtypes.IntType):  # type: ignore[misc]
        pass

    class Semver:
        def __init__(self, text: str) -> None:
            self.key = semver_key(text)

    def key(v: Any) -> Any:
        return v.key if isinstance(v, Semver) else int(v)

    def cmp(a: Any, b: Any) -> Any:
        return celtypes.IntType((key(a) > key(b)) - (key(a) < key(b)))

    # quantities in whole units: cel-python's IntType is 64-bit
    funcs = {"quantity": lambda s: Quantity(nano_value(str(s)) // 10**9), "semver": lambda s: Semver(str(s)),
             "compareTo": cmp, "isGreaterThan": lambda a, b: celtypes.BoolType(cmp(a, b) > 0),
             "isLessThan": lambda a, b: celtypes.BoolType(cmp(a, b) < 0)}
    env = celpy.Environment()
    t = time.perf_counter()
    progs = [env.program(env.compile(e), functions=funcs) for e, _ in EXPRS]
    compile_us = (time.perf_counter() - t) / len(EXPRS) * 1e6
    attrs = {"model": "A100", "cores": 8, "vip": False}
    device = celpy.json_to_cel({"driver": "gpu.example.com", "attributes": {"gpu.example.com": attrs}, "capacity": {}})
    device[celtypes.StringType("attributes")][celtypes.StringType("gpu.example.com")][
        celtypes.StringType("driverVersion")] = Semver("1.2.3")
    device[celtypes.StringType("capacity")][celtypes.StringType("gpu.example.com")] = celtypes.MapType(
        {celtypes.StringType("memory"): Quantity(nano_value("80Gi") // 10**9)})
    act = {"device": device}
    ok = sum(1 for p, (_, want) in zip(progs, EXPRS, strict=True) if p.evaluate(act) == want)
    n = N // 10
    t = time.perf_counter()
    for _ in range(n):
        for p in progs:
            p.evaluate(act)
    eval_us = (time.perf_counter() - t) / n / len(progs) * 1e6
    return (f"cel-python:                 {ok}/{len(EXPRS)} correct, compile {compile_us:.0f} µs/expr, "
            f"eval {eval_us:.1f} µs")


def main() -> None:
    print(bench_rust())
    try:
        print(bench_celpy())
    except ImportError:
        print("cel-python: not installed (pip install cel-python to compare)")


if __name__ == "__main__":
    main()
