"""How the cluster autoscaler falls back across a capacity group's pools, as
components/catalog/autoscaler_fallback.py models it from the upstream code: which pool it tries
when, for one pending pod, and why a group's later pools may wait long or never be tried. The
figures are the ones docs/design/capacity-groups.md and docs/design/autoscaler-fallback.md quote."""

from __future__ import annotations

import itertools

import pytest
from conftest import ROOT

from components.catalog import autoscaler_fallback as fallback
from components.catalog.autoscaler_fallback import FAST_FAILURE_SECONDS as FAST
from components.catalog.autoscaler_fallback import SLOW_FAILURE_SECONDS as SLOW
from components.catalog.autoscaler_fallback import BackedOff, Try, back_off, walk

LOOP = fallback.SCAN_INTERVAL_SECONDS


def order(pools: str, fails_after: dict[str, int] | None = None, tries: int = 7) -> str:
    return " ".join(t.pool for t in walk(pools, fails_after).tries[:tries])


def test_the_model_stands_on_aks_and_upstreams_defaults() -> None:
    assert (fallback.SCAN_INTERVAL_SECONDS, fallback.MAX_NODE_PROVISION_SECONDS) == (10, 15 * 60)
    assert (fallback.INITIAL_BACKOFF_SECONDS, fallback.MAX_BACKOFF_SECONDS, fallback.BACKOFF_RESET_SECONDS) == (300, 1800, 3 * 3600)
    assert (SLOW, FAST) == (15 * 60 + 10, 10), "a slow failure shows a loop after max-node-provision-time; a fast one in a loop"


def test_with_slow_failures_three_pools_go_a_b_a_b_a_b_before_the_third_at_about_92_minutes() -> None:
    """Each try fails only at max-node-provision-time: the first pool's 5 minutes of back-off are
    over before the second pool's failure shows, so the autoscaler goes back to the first."""
    fell_back = walk("ABC")
    assert order("ABC") == "A B A B A B C"
    assert [(t.start, t.failed) for t in fell_back.tries[:7]] == [
        (0, 910), (920, 1830), (1840, 2750), (2760, 3670), (3680, 4590), (4600, 5510), (5520, 6430)
    ]  # fmt: skip
    assert fell_back.first_tries == {"A": 0, "B": 920, "C": 5520}
    assert fell_back.first_try("C") // 60 == 92


def test_with_slow_failures_a_fourth_pool_is_never_tried() -> None:
    """From the third pool on the three first pools take turns, each back for its next try once
    its back-off (at most 30 minutes) is over, so no loop ever finds them all backed off."""
    fell_back = walk("ABCD")
    assert fell_back.first_tries == {"A": 0, "B": 920, "C": 5520, "D": None}
    assert fell_back.reached == ("A", "B", "C")
    assert " ".join(t.pool for t in fell_back.tries[-6:]) == "A B C A B C", "it repeats from here on"
    assert fallback.reach(4) == fallback.reach(10) == 3 and fallback.reach(2) == 2


def test_two_pools_with_slow_failures_take_turns_and_wait_out_a_back_off_to_its_end() -> None:
    """At 92:00 both pools are backed off, A until 96:30: a back-off is over only once its time
    is before now (BackoffStatus), so A's next try is the loop after, 96:40."""
    assert order("AB", tries=6) == "A B A B A B"
    assert walk("AB").first_tries == {"A": 0, "B": 920}
    assert walk("AB").tries[6] == Try("A", start=96 * 60 + 40, failed=96 * 60 + 40 + SLOW)


def test_with_fast_failures_each_next_pool_is_tried_within_two_loops() -> None:
    fast = {pool: FAST for pool in "ABCDEF"}
    fell_back = walk("ABCDEF", fast)
    assert order("ABCDEF", fast, tries=6) == "A B C D E F"
    assert fell_back.first_tries == {pool: 2 * LOOP * n for n, pool in enumerate("ABCDEF")}


def test_a_refused_put_is_tried_past_in_the_next_loop() -> None:
    """A PUT Azure refuses backs the pool off in the scale-up's own loop (executor.go)."""
    assert walk("AB", {"A": 0, "B": 0}).first_tries == {"A": 0, "B": LOOP}


def test_a_fast_first_pool_lets_a_slow_group_reach_its_third_pool_in_16_minutes() -> None:
    """The first pool refused at once (quota), the others failing slowly: by the time the second
    gives up, the first has failed twice and doubled its back-off to 10 minutes, so the third
    is next."""
    mixed = {"A": FAST}
    assert order("ABC", mixed, tries=4) == "A B A C"
    assert walk("ABC", mixed).first_tries == {"A": 0, "B": 20, "C": 960}


@pytest.mark.parametrize("pools", ["AB", "ABC"])
def test_no_mix_of_failure_times_reaches_the_last_pool_later_than_all_slow(pools: str) -> None:
    """The group's Job deadline counts on all-slow failures being the worst case: any failure
    time from a refused PUT (0 s) to a timed-out node, pool by pool, reaches the last pool no later."""
    slow = walk(pools).first_try(pools[-1])
    assert slow is not None
    for times in itertools.product([0, FAST, 300, 600, SLOW], repeat=len(pools)):
        last = walk(pools, dict(zip(pools, times, strict=True))).first_try(pools[-1])
        assert last is not None and last <= slow, times


def test_a_failure_during_an_active_back_off_re_arms_the_same_duration() -> None:
    """exponential_backoff.go Backoff: "Multiple concurrent scale-ups failing shouldn't cause
    backoff duration to increase exponentially"; the duration doubles only once the back-off has expired."""
    first = back_off(None, 910)
    assert first == BackedOff(duration=300, until=1210, last_failed=910)
    assert back_off(first, 1200) == BackedOff(duration=300, until=1500, last_failed=1200), "still backed off: the same 5 minutes"
    assert back_off(first, 1210) == BackedOff(duration=300, until=1510, last_failed=1210), "until is not before now: still active"
    assert back_off(first, 1220) == BackedOff(duration=600, until=1820, last_failed=1220), "expired: doubled"
    at_most = BackedOff(duration=1800, until=5000, last_failed=3200)
    assert back_off(at_most, 6000).duration == 1800, "never past 30 minutes"
    assert back_off(at_most, 3200 + 3 * 3600 + 10).duration == 300, "forgotten 3 hours after the last failure"


def test_doubling_only_after_expiry_is_what_lets_the_third_pool_in() -> None:
    """The first pool's third failure doubles its back-off to 20 minutes, longer than a slow
    try of the second pool: that loop finds both backed off, and the third pool is tried."""
    tries = walk("ABC").tries
    a_third = [t for t in tries if t.pool == "A"][2]
    b_third = [t for t in tries if t.pool == "B"][2]
    assert (a_third.failed, b_third.failed) == (4590, 5510)
    assert back_off(back_off(back_off(None, 910), 2750), 4590).until > b_third.failed + LOOP
    assert tries[6].pool == "C" and tries[6].start == b_third.failed + LOOP


def test_a_failure_time_is_a_whole_number_of_loops() -> None:
    assert walk("AB", {"A": 1}).tries[0].failed == LOOP
    with pytest.raises(ValueError, match="a try fails after 0 seconds or more, not -1"):
        walk("AB", {"A": -1})


# --------------------------------------------------------------------------- the docs


def minutes(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def trace(pools: str) -> list[str]:
    """The walk as the design note's table: each try, and the back-off its failure sets."""
    rows, backed_off = [], {}
    for n, tried in enumerate(walk(pools).tries, 1):
        backed_off[tried.pool] = b = back_off(backed_off.get(tried.pool), tried.failed)
        rows.append(
            f"| {n} | {tried.pool} | {minutes(tried.start)} | {minutes(tried.failed)} | {b.duration // 60} min, to {minutes(b.until)} |"
        )
    return rows


def flat(path: str) -> str:
    return " ".join((ROOT / "docs" / path).read_text().split())


def figures() -> tuple[int, int, int]:
    """When B is first tried of two pools, C of three, and C of three where A fails fast."""
    second, third, mixed = walk("AB").first_try("B"), walk("ABC").first_try("C"), walk("ABC", {"A": FAST}).first_try("C")
    assert second is not None and third is not None and mixed is not None
    return second, third, mixed


def test_the_design_note_traces_the_walk_the_model_computes() -> None:
    note = (ROOT / "docs" / "design" / "autoscaler-fallback.md").read_text()
    table = [line for line in note.splitlines() if line.startswith("| ") and not line.startswith("| try")]
    assert table == trace("ABC"), "the three pools' walk, try by try, until it repeats"
    said = flat("design/autoscaler-fallback.md")
    second, third, mixed = figures()
    assert f"A B A B A B C, the third pool at {third // 60} minutes" in said
    assert f"B first tried at {minutes(second)}" in said
    assert f"(try 7, at {minutes(walk('AB').tries[6].start)})" in said
    assert f"first pool's back-off ({fallback.INITIAL_BACKOFF_SECONDS // 60} minutes)" in said
    assert f"(2 × {minutes(SLOW + LOOP)} = {minutes(2 * (SLOW + LOOP))} before the pod is free)" in said
    assert f"A B A C, C at {minutes(mixed)}" in said
    assert "A at 0:00, B at 0:20, C at 0:40, D at 1:00" in said
    assert walk("ABCD", {p: FAST for p in "ABCD"}).first_tries == {"A": 0, "B": 20, "C": 40, "D": 60}


def test_the_capacity_page_says_the_walk_the_model_computes() -> None:
    page = flat("design/capacity-groups.md")
    second, third, mixed = figures()
    assert f"| 2 | A B A B A B … | {second // 60} min {second % 60} s ({second} s) |" in page
    assert f"| 3 | A B A B A B C, then A B C in turn | {third // 60} min ({third} s) |" in page
    assert f"| {fallback.reach(4) + 1} or more | as for {fallback.reach(4)} | never: no pool after the third is ever tried |" in page
    assert f"{SLOW // 60} min {SLOW % 60} s" in page and f"A at 0 s, B at {2 * LOOP} s, C at {4 * LOOP} s" in page
    assert f"A B A C, the third at {mixed // 60} minutes" in page
    assert f"backoff, at most {fallback.MAX_BACKOFF_SECONDS // 60} minutes, never outlasts two slow tries" in page
    assert f"**A group lists at most {fallback.reach(99)} pools**" in page
    assert "[autoscaler-fallback.md](autoscaler-fallback.md)" in page


def test_the_key_reference_and_the_gpu_page_say_how_many_pools_a_group_may_list() -> None:
    most = fallback.reach(99)
    assert f"at most {most} pools, as many as the autoscaler ever tries" in flat("configuration-keys.md")
    assert f"2 or {most} pools, each an entry of `gpuPools`" in flat("gpu.md")
