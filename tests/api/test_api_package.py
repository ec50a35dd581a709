from __future__ import annotations

import kubesched.api as api


def test_all_sorted_and_importable():
    assert api.__all__ == sorted(api.__all__)
    for name in api.__all__:
        assert hasattr(api, name), name
    for name in ("parse_quantity", "to_int", "Pod", "Node", "decode", "Selector", "NodeSelectorMatcher",
                 "RequiredNodeAffinity", "PreferredSchedulingTerms", "tolerates", "pod_requests",
                 "pod_non_zero_requests", "KINDS", "selector_from_label_selector", "selector_from_set",
                 "find_matching_untolerated_taint", "node_allocatable"):
        assert name in api.__all__, name
