"""``kubesched.kube._aiohttp_ssl``: aiohttp imported through ``kubesched.kube.client`` puts off loading
the CA store of its two default SSL contexts until a request uses one, and then behaves as plain
aiohttp (the store is loaded: an unknown self-signed server is refused as before). Runs in a fresh
interpreter: the test process has imported aiohttp long before."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

CHILD = textwrap.dedent("""
    import asyncio, ssl, sys
    import kubesched.kube.client  # first import of aiohttp
    import aiohttp
    import aiohttp.connector as c
    from aiohttp import web
    from kubesched.kube.endpoints import self_signed_cert

    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    before = (c._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509_ca"],
              c._SSL_CONTEXT_UNVERIFIED.cert_store_stats()["x509_ca"])

    async def main():
        import tempfile, os
        cert, key = self_signed_cert("localhost", ["127.0.0.1"])
        d = tempfile.mkdtemp()
        open(os.path.join(d, "c"), "wb").write(cert); open(os.path.join(d, "k"), "wb").write(key)
        sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); sctx.load_cert_chain(os.path.join(d, "c"), os.path.join(d, "k"))
        app = web.Application(); app.router.add_get("/", lambda r: web.Response(text="ok"))
        runner = web.AppRunner(app); await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=sctx); await site.start()
        url = f"https://127.0.0.1:{runner.addresses[0][1]}/"
        async with aiohttp.ClientSession() as s:
            try:
                async with s.get(url) as r:
                    refused = False
            except aiohttp.ClientConnectorCertificateError:
                refused = True
            async with s.get(url, ssl=False) as r:
                unverified = await r.text()
        await runner.cleanup()
        return refused, unverified

    refused, unverified = asyncio.run(main())
    after = (c._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509_ca"],
             c._SSL_CONTEXT_UNVERIFIED.cert_store_stats()["x509_ca"])
    print(system, before, after, refused, unverified)
""")


def test_default_contexts_load_the_ca_store_on_first_use() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, check=True).stdout.split()
    system = int(out[0])
    assert " ".join(out[1:]) == f"(0, 0) ({system}, {system}) True ok"
