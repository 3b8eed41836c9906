"""What the main process does with whatever a worker sends (issue #38): the answer parser is total
(an answer or ProtocolError, nothing else, fuzzed), a file whose drive fails is that file's `not
verifiable` and never the run's, every run asked must be answered, and equal non-finite values
agree. No TensorFlow: these are the main process's own rooms."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tf_grl_migrate.verifier import driver, probes, verdict
from tf_grl_migrate.verifier.protocol import (
    Array,
    Kind,
    ModeError,
    ModeValues,
    ProtocolError,
    Ran,
    RunValues,
    Status,
    Unverifiable,
    Values,
    decode,
    encode,
    loads,
)

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.integers(
    min_value=10**300, max_value=10**400)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["ran", "values", "unverifiable", "reason", "results", "runs", "mode", "setting", "y", "g",
                     "shape", "values", "variables", "deterministic", "drawn", "variant", "new", "defined", "error",
                     "lines", "note"]) | st.text(max_size=6), inner, max_size=5), max_leaves=30)


def _ran(variant=0, settings_=({"l": 1.0}, {"l": 0.5})) -> Ran:
    results = tuple(RunValues(s, (Array((2,), (1.0, 2.0)),), (Array((2,), (-1.0, -1.0)),), (), True, ())
                    for s in settings_)
    return Ran(variant, False, (2,), results)


def _answer_text(answer) -> bytes:
    return encode(answer)


@settings(max_examples=400, deadline=None)
@given(data=_JSON, kind=st.sampled_from(list(Kind)))
def test_decode_is_total_over_random_json(data, kind):
    try:
        decode(kind, data)
    except ProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(data=_JSON, kind=st.sampled_from(list(Kind)), cut=st.integers(min_value=0, max_value=400))
def test_truncated_and_wrapped_answers_are_protocol_errors_or_answers(data, kind, cut):
    for wrapped in ({"ran": data}, {"values": data}, {"unverifiable": data}, {"values": {"runs": [data]}},
                    {"ran": {"results": [data], "variant": 0, "new": False, "shape": [2]}}):
        try:
            line = json.dumps(wrapped).encode()
        except (ValueError, OverflowError):
            continue
        for text in (line, line[:cut]):
            try:
                decode(kind, loads(text))
            except ProtocolError:
                pass


@pytest.mark.parametrize("text", [
    b"[" * 5000 + b"]" * 5000,  # nested past the parser's depth (RecursionError)
    b'{"ran": ' * 990 + b"1" + b"}" * 990,
    b'{"x": 1' + b"0" * 400 + b"}",  # an integer of 400 digits: valid JSON
    b"\xff\xfe not utf-8",
])
def test_lines_no_parser_takes_are_protocol_errors(text):
    try:
        data = loads(text)
    except ProtocolError:
        return
    with pytest.raises(ProtocolError):
        decode(Kind.TF2, data)


def test_a_400_digit_number_in_an_array_is_a_protocol_error_not_an_overflow():
    answer = json.loads(_answer_text(_ran()))
    answer["ran"]["results"][0]["y"][0]["values"][0] = 10**400
    with pytest.raises(ProtocolError, match="float range"):
        decode(Kind.TF1, answer)


def test_a_good_answer_still_decodes():
    assert decode(Kind.TF1, loads(_answer_text(_ran()))) == _ran()


def test_a_probe_of_an_image_and_its_filters_crosses_the_protocol_and_nothing_else_like_it():
    # probes.SHAPES ends with a pair: the first input's shape and the others' (a convolution's)
    pair = Ran(0, False, ([2, 5, 5, 3], [3, 3, 3, 3]), _ran().results)
    assert decode(Kind.TF1, loads(_answer_text(pair))).shape == ([2, 5, 5, 3], [3, 3, 3, 3])
    for bad in ([[2], [3], [4]], [[2, 5], 3], [[2, 5], [True]], [[2, "5"], [3]]):
        answer = json.loads(_answer_text(_ran()))
        answer["ran"]["shape"] = bad
        with pytest.raises(ProtocolError, match="a bad shape"):
            decode(Kind.TF1, answer)


@pytest.mark.parametrize("transient", [False, True])
def test_whether_the_machine_is_to_blame_crosses_the_protocol(transient):
    answer = Unverifiable("the worker's child failed before it could run the request", transient)
    assert decode(Kind.TF2, loads(_answer_text(answer))) == answer
    assert decode(Kind.TF1, {"unverifiable": {"reason": "no graph"}}) == Unverifiable("no graph")
    with pytest.raises(ProtocolError, match="transient"):
        decode(Kind.TF1, {"unverifiable": {"reason": "no graph", "transient": "yes"}})


# -- the verdict ----------------------------------------------------------------------------------


def _values(*runs) -> Values:
    return Values(tuple(runs))


def _mode(mode, setting, y=(1.0, 2.0), g=(-1.0, -1.0)) -> ModeValues:
    return ModeValues(mode, setting, (Array((2,), y),), (Array((2,), g),), 0)


def test_a_run_asked_and_not_answered_makes_the_site_not_verifiable():
    reference = _ran()
    right_eagerly_only = _values(_mode("eager", 0), _mode("eager", 1), _mode("tf.function", 0))
    outcome = verdict.judge(reference, right_eagerly_only, "f", ["x"], None)
    assert outcome.status is Status.NOT_VERIFIABLE
    assert outcome.reason == "no answer for tf.function, l=0.5"
    every_run = _values(_mode("eager", 0), _mode("eager", 1), _mode("tf.function", 0), _mode("tf.function", 1))
    assert verdict.judge(reference, every_run, "f", ["x"], None).status is Status.VERIFIED


def test_a_mode_that_stopped_at_an_error_is_not_asked_again():
    reference = _ran()
    outcome = verdict.judge(reference, _values(_mode("eager", 0), _mode("eager", 1), ModeError(
        "tf.function", 0, "needs a graph", (3,))), "f", ["x"], [10])
    assert outcome.status is Status.VERIFIED and "tf.function not run" in outcome.reason


def test_a_setting_no_mode_ran_is_not_verified_by_the_others():
    """`scale=1.0` ran in both modes, `scale=0.5` raised in both (in code the migration did not
    change): 0.5 may be the only setting that reaches the site, so nothing is verified."""
    reference = _ran()
    outcome = verdict.judge(reference, _values(
        _mode("eager", 0), ModeError("eager", 1, "TypeError: no", (7,)),
        _mode("tf.function", 0), ModeError("tf.function", 1, "TypeError: no", (7,))), "f", ["x"], [10])
    assert outcome.status is Status.NOT_VERIFIABLE
    assert outcome.reason.startswith("l=0.5 ran in no mode: raises at line 7, in code the migration did not change")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_equal_non_finite_values_at_equal_places_agree(value):
    reference = Ran(0, False, (2,), (RunValues({}, (Array((2,), (value, 1.0)),), (Array((2,), (value, 2.0)),),
                                                (), True, ()),))
    values = _values(*(ModeValues(m, 0, (Array((2,), (value, 1.0)),), (Array((2,), (value, 2.0)),), 0)
                       for m in ("eager", "tf.function")))
    assert verdict.judge(reference, values, "f", ["x"], None).status is Status.VERIFIED


def test_a_non_finite_value_against_a_finite_one_differs_and_says_so():
    reference = Ran(0, False, (2,), (RunValues({}, (Array((2,), (1.0, 1.0)),), (Array((2,), (2.0, 2.0)),),
                                                (), True, ()),))
    values = _values(*(ModeValues(m, 0, (Array((2,), (1.0, 1.0)),), (Array((2,), (float("inf"), 2.0)),), 0)
                       for m in ("eager", "tf.function")))
    outcome = verdict.judge(reference, values, "f", ["x"], None)
    assert outcome.status is Status.DIFFERS and "inf or NaN on one side only" in outcome.reason
    inf_against_minus_inf = verdict.deviation(Array((1,), (float("inf"),)), Array((1,), (float("-inf"),)), 0, 0)
    assert inf_against_minus_inf.bad == 1 and inf_against_minus_inf.non_finite == 1


# -- the run --------------------------------------------------------------------------------------


def _task(name: str) -> driver._Task:
    source = f"def {name}(x):\n    return x\n"
    probe = probes.Probe({"kind": "function", "name": name, "variants": [[]]}, [(1, 1)], [f"{name}(x[{{shape}}])"])
    return driver._Task(driver.Job(f"/nowhere/{name}.py", source, source), source, probe, (), None)


def test_an_exception_in_one_files_drive_is_that_files_not_verifiable(monkeypatch, tmp_path):
    def one(task, *args):
        if task.probe.entry["name"] == "broken":
            raise RecursionError("maximum recursion depth exceeded")
        return [(verdict.Outcome(Status.VERIFIED, 0.0), task.probe.label)]

    monkeypatch.setattr(driver, "_one", one)
    outcomes = driver._run([_task("broken"), _task("fine")], 1, 10.0, "/nonexistent/python", [], {})
    (broken, _), = outcomes[0]
    assert broken.status is Status.NOT_VERIFIABLE and "RecursionError" in broken.reason
    assert outcomes[1][0][0].status is Status.VERIFIED


def test_an_answer_for_a_way_of_calling_that_was_not_asked_is_not_verifiable(monkeypatch):
    """The TF1 side names `variant: 99` of a probe with one way of calling it (an IndexError once)."""
    monkeypatch.setattr(driver, "_ask", lambda pool, request, timeout: _ran(variant=99))
    task = _task("f")
    outcome, _label, ran = driver._exercise(task.job, task.new_text, task.probe, None, 10.0, [], {})
    assert outcome.status is Status.NOT_VERIFIABLE and "way 99" in outcome.reason and not ran


def test_no_answer_in_time_is_the_machines_and_an_answer_that_says_so_is_the_codes(monkeypatch):
    """What decides that an outcome is not stored is a flag from where the answer failed, never
    the words of its reason: a worker cut off is transient, the code's own "timed out" is not."""
    task = _task("f")
    for answer, transient in [(Unverifiable("timed out after 8 s (--verify-timeout)", True), True),
                              (Unverifiable("the callable raised: TimeoutError: timed out"), False),
                              (None, True)]:  # no answer at all
        monkeypatch.setattr(driver, "_ask", lambda pool, request, timeout, answer=answer: answer)
        outcome, _label, _ran_it = driver._exercise(task.job, task.new_text, task.probe, None, 10.0, [], {})
        assert outcome.status is Status.NOT_VERIFIABLE and outcome.transient is transient, answer


def test_a_worker_that_cannot_start_is_no_answer_about_the_code(tmp_path):
    from tf_grl_migrate.verifier.pool import Worker
    from tf_grl_migrate.verifier.protocol import Request

    worker = Worker(str(tmp_path / "no-such-python"), str(tmp_path))
    answer = worker.ask(Request(Kind.TF1, str(tmp_path / "m.py"), "", {}, [], []), 1.0)
    assert isinstance(answer, Unverifiable) and answer.transient and "could not be started" in answer.reason


def test_the_fallback_notice_names_every_gap_not_only_network_and_processes():
    from tf_grl_migrate.verifier.pool import isolation_line

    class _Worker:
        hello: ClassVar[dict] = {"isolation": {"namespaces": False, "why": "unshare: Operation not permitted"}}

    line = isolation_line([_Worker()])  # a worker that says nothing of the socket filter had none
    assert all(gap in line for gap in ("network", "processes", "environment (/proc)", "Unix sockets", "container"))
    _Worker.hello = {"isolation": {"namespaces": False, "why": "unshare: EPERM", "socket_filter": True}}
    line = isolation_line([_Worker()])
    assert "network" in line and "Unix sockets" not in line and "unshare: EPERM" in line
    _Worker.hello = {"isolation": {"namespaces": True, "socket_filter": False, "socket_filter_why": "seccomp: EINVAL"}}
    line = isolation_line([_Worker()])
    assert "Unix sockets" in line and "network" not in line and "seccomp: EINVAL" in line
    _Worker.hello = {"isolation": {"namespaces": True, "why": None, "socket_filter": True}}
    assert isolation_line([_Worker()]) is None


def test_shape_hints_are_the_shapes_the_modules_code_names():
    """After SHAPES, the verifier tries what a module's code asks for: a last axis split into
    sizes, fixed trailing dimensions of a reshape, a batch of square matrices for a rank-3
    transpose; none twice, none already in SHAPES, nothing from a computed size."""
    import ast

    tree = ast.parse(
        "def f(x, n):\n"
        "    a, b = tf.split(x, [3, 3], axis=-1)\n"
        "    c, d = tf.split(x, [1, 2], -1)\n"  # [4, 3]: in SHAPES already
        "    e, f = tf.split(x, [n, 3], axis=-1)\n"  # computed: nothing
        "    g = tf.split(x, [2, 2], axis=0)\n"  # not the last axis: nothing
        "    h = tf.reshape(x, [-1, 4, 4])\n"
        "    u = tf.transpose(h, [0, 2, 1])\n"
        "    return tf.reshape(a, [-1, 4, 4]), u\n")
    assert probes.shape_hints(tree) == ([4, 6], [2, 4, 4], [2, 3, 3])
