"""``replay`` with a scheduler extender (a real server on 127.0.0.1): the extender's filter
and scores decide on the virtual clock as in ``run``."""

from __future__ import annotations

from pathlib import Path

import msgspec
from test_replay import CONFIG, _pod, _replay

from kubesched.config.types import Extender
from kubesched.testing.extender_server import ExtenderServer


def test_replay_consults_the_extender(tmp_path: Path) -> None:
    srv = ExtenderServer(filter=lambda pod, names: ({n for n in names if n != "n1"}, {"n1": "n1 is reserved"}, {}),
                         prioritize=lambda pod, names: {"n3": 10} if "n3" in names else {})
    with srv:
        cfg = msgspec.structs.replace(CONFIG, extenders=[Extender(
            url_prefix=srv.url, filter_verb="filter", prioritize_verb="prioritize", weight=3,
            node_cache_capable=True)])
        rp = _replay(tmp_path, ["n1,8000,16384,0,", "n2,8000,16384,0,", "n3,8000,16384,0,"],
                     [_pod("a", 1000, 1024, 0, 50), _pod("b", 1000, 1024, 10, None)], config=cfg)
        s = rp.run()
    assert rp.node_of == {"default/a": "n3", "default/b": "n3"}
    assert (s.pods_scheduled, s.pods_never_scheduled) == (2, 0)
    assert [b["NodeNames"] for b in srv.calls("filter")] == [["n1", "n2", "n3"]] * 2
