"""Malformed session files: each is refused with an InputError (and nothing else) whose one-line
message names the file, the place and the problem. Plus a mutation fuzzer over the examples."""

from __future__ import annotations

import builtins
import io
import pathlib
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.io.errors import InputError
from workbench.io.sessions import load_session, loads_session
from workbench.model.session import Session

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "workbench" / "examples").glob("*.yaml"))


def gemm(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return ("schema_version: 1\nhardware:\n  - preset: h100-sxm\noperations:\n"
            "  - name: op\n    kind: gemm\n" + body)


def attention(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return "schema_version: 1\noperations:\n  - name: att\n    kind: attention\n" + body


def machine(compute: str = "{bf16: 100 TFLOP/s}", memory: str | None = "{hbm: 1 TB/s}",
            *extra: str) -> str:
    text = "schema_version: 1\nhardware:\n  - name: Mine\n"
    if compute is not None:
        text += f"    compute: {compute}\n"
    if memory is not None:
        text += f"    memory: {memory}\n"
    return text + "".join(f"    {line}\n" for line in extra)


BILLION_LAUGHS = "schema_version: 1\n" + "lol0: &lol0 lol\n" + "".join(
    f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 9)}]\n" for i in range(1, 10))
MANY_ALIASES = ("schema_version: 1\na: &a [x]\nlist: [" + ", ".join(["*a"] * 150) + "]\n")

_garbage = random.Random(20240501)
GARBAGE = bytes(_garbage.randrange(256) for _ in range(2000)) + b"\x00" + b"schema_version: 1"


# (id, file content, fragments the message must contain, line the message must name or None)
CASES: list[tuple[str, str | bytes, tuple[str, ...], int | None]] = [
    # wrong types
    ("m-text", gemm("m: abc"), ("operations[0].m", "positive integer", "abc"), 7),
    ("m-fraction", gemm("m: 3.5"), ("operations[0].m", "positive integer", "3.5"), 7),
    ("m-bool", gemm("m: true"), ("operations[0].m", "positive integer"), 7),
    ("m-huge-negative", gemm("m: -" + "9" * 330), ("operations[0].m", "positive integer"), 7),
    # an explicit YAML tag its value cannot satisfy
    ("tag-bool-maybe", gemm("m: !!bool maybe"), ("'maybe'", "!!bool"), 7),
    ("tag-int-empty", gemm("m: !!int ''"), ("''", "!!int"), 7),
    ("tag-float-empty", gemm("m: !!float"), ("!!float",), 7),
    ("tag-timestamp", "schema_version: 1\ntitle: !!timestamp nope\n", ("'nope'", "!!timestamp"),
     2),
    ("causal-string", attention('causal: "yes"'), ("operations[0].causal", "true or false"), 5),
    ("heads-list", attention("heads: [1]"), ("operations[0].heads", "positive integer", "list"), 5),
    ("dtype-unknown", gemm("dtype: bf17"), ("operations[0].dtype", "bf17", "bf16"), 7),
    ("name-number", "schema_version: 1\noperations:\n  - name: 12\n    kind: gemm\n",
     ("operations[0].name", "text"), 3),
    ("operations-mapping", "schema_version: 1\noperations: {kind: gemm}\n",
     ("operations", "list"), 2),
    ("operations-false", "schema_version: 1\noperations: false\n", ("operations", "list"), 2),
    ("hardware-false", "schema_version: 1\nhardware: false\n", ("hardware", "list"), 2),
    ("title-mapping", "schema_version: 1\ntitle: {a: 1}\n", ("title", "text"), 2),
    ("machine-list", "schema_version: 1\nhardware:\n  - [h100-sxm]\n", ("hardware[0]",), 3),
    ("schema-text", "schema_version: one\n", ("schema_version", "one"), 1),
    # sizes
    ("m-negative", gemm("m: -5"), ("operations[0].m", "positive integer", "-5"), 7),
    ("m-zero", gemm("m: 0"), ("operations[0].m", "positive integer"), 7),
    ("batch-zero", gemm("batch: 0"), ("operations[0].batch", "positive integer"), 7),
    ("head-dim-negative", attention("head_dim: -128"), ("operations[0].head_dim", "positive"), 5),
    ("m-too-large", gemm("m: 9007199254740993"), ("operations[0].m", "too large"), 7),
    ("m-huge-literal", gemm("m: 1" + "0" * 5000), ("operations[0].m",), 7),
    ("m-infinite", gemm("m: .inf"), ("operations[0].m",), 7),
    ("custom-negative-bytes",
     "schema_version: 1\noperations:\n  - kind: custom\n    bytes: -1 GB\n",
     ("operations[0].bytes", "at least"), 4),
    ("zero-bandwidth", machine("{bf16: 100 TFLOP/s}", "{hbm: 0 TB/s}"),
     ("hardware[0].memory.hbm", "positive"), 5),
    ("negative-compute", machine("{bf16: -1 TFLOP/s}"), ("hardware[0].compute.bf16", "positive"),
     4),
    ("empty-compute", machine("{}"), ("hardware[0].compute", "at least one"), 4),
    ("efficiency-above-one", "schema_version: 1\nhardware:\n  - preset: l4\n    efficiency: 1.5\n",
     ("hardware[0].efficiency", "(0, 1]"), 4),
    ("main-memory-unknown", machine("{bf16: 1 TFLOP/s}", "{hbm: 1 TB/s}", "main_memory: l2"),
     ("hardware[0].main_memory", "hbm", "l2"), 6),
    # unknown names
    ("kind-typo", gemm().replace("kind: gemm", "kind: gemn"),
     ("operations[0].kind", "gemn", "did you mean 'gemm'"), 6),
    ("kind-list", gemm().replace("kind: gemm", "kind: [gemm]"), ("operations[0].kind",), 6),
    ("kind-mapping", gemm().replace("kind: gemm", "kind: {name: gemm}"), ("operations[0].kind",),
     6),
    ("dtype-list", gemm("dtype: [bf16]"), ("operations[0].dtype",), 7),
    ("step-op-list", "schema_version: 1\noperations:\n  - kind: elementwise\n    steps:\n"
                     "      - op: [fma]\n", ("operations[0].steps[0].op",), 5),
    ("kind-unknown", gemm().replace("kind: gemm", "kind: conv3d"),
     ("operations[0].kind", "conv3d", "gemm", "attention"), 6),
    ("preset-unknown", "schema_version: 1\nhardware:\n  - preset: h100-sxn\n",
     ("hardware[0].preset", "h100-sxn", "h100-sxm"), 3),
    ("key-top", "schema_version: 1\ntitel: x\n", ("titel", "did you mean 'title'"), 2),
    ("key-operation", gemm("dtpye: bf16"), ("operations[0].dtpye", "did you mean 'dtype'"), 7),
    ("key-machine", machine("{bf16: 1 TFLOP/s}", "{hbm: 1 TB/s}", "memroy: {}"),
     ("hardware[0].memroy", "did you mean 'memory'"), 6),
    ("key-preset-entry", "schema_version: 1\nhardware:\n  - preset: l4\n    compute: {}\n",
     ("hardware[0].compute", "preset"), 4),
    ("precision-typo", machine("{bf61: 1 TFLOP/s}"), ("hardware[0].compute.bf61", "bf16"), 4),
    ("step-typo", "schema_version: 1\noperations:\n  - kind: elementwise\n    steps:\n"
                  "      - op: fma\n      - op: gleu\n",
     ("operations[0].steps[1].op", "did you mean 'gelu'"), 6),
    ("theme-unknown", "schema_version: 1\nview: {theme: neon}\n", ("view.theme", "light"), 2),
    # missing fields
    ("no-kind", "schema_version: 1\noperations:\n  - name: x\n    m: 5\n",
     ("operations[0]", "kind"), 3),
    ("machine-no-memory", machine("{bf16: 1 TFLOP/s}", None), ("hardware[0]", "memory"), 3),
    ("machine-no-compute", machine(None), ("hardware[0]", "compute"), 3),
    ("custom-step-no-flops", "schema_version: 1\noperations:\n  - kind: elementwise\n    steps:\n"
                             "      - op: custom\n",
     ("operations[0].steps[0]", "flops"), 5),
    # relations
    ("kv-heads-not-dividing", attention("heads: 32", "kv_heads: 5"),
     ("operations[0].kv_heads", "divide", "32"), 6),
    ("kv-heads-above-heads", attention("heads: 8", "kv_heads: 16"),
     ("operations[0].kv_heads", "heads"), 6),
    ("range-reversed", "schema_version: 1\nview:\n  x_range: [100, 1]\n", ("view.x_range",), 3),
    # versions and shapes of the document
    ("schema-newer", "schema_version: 3\ntitle: from the future\n",
     ("schema_version", "3", "newer", "reads schema_version 2"), 1),
    ("schema-missing", "title: no version\noperations: []\n",
     ("schema_version", "schema_version 2"), None),
    ("schema-zero", "schema_version: 0\n", ("schema_version",), 1),
    ("empty-file", "", ("empty",), None),
    ("only-comments", "# nothing here\n\n", ("empty",), None),
    ("top-level-list", "- schema_version: 1\n- operations: []\n", ("mapping", "list"), None),
    ("top-level-text", "just some words\n", ("mapping", "just some words"), None),
    ("binary-garbage", GARBAGE, ("NUL",), None),
    ("invalid-utf8", b"schema_version: 1\ntitle: caf\xe9 \xff\n", ("UTF-8",), None),
    ("control-character", b"schema_version: 1\ntitle: bell\x07here\n", ("character",), None),
    ("control-character-first", b"\x1fschema_version: 1\n", ("character",), None),
    ("utf16", "schema_version: 1\n".encode("utf-16"), (), None),
    # hostile YAML
    ("alias-bomb", BILLION_LAUGHS, ("alias",), None),
    ("many-aliases", MANY_ALIASES, ("aliases",), None),
    ("merge-key", "schema_version: 1\nbase: &b {m: 1}\noperations:\n  - <<: *b\n    kind: gemm\n",
     ("merge",), None),
    ("deep-nesting", "schema_version: 1\ntitle: " + "[" * 1000 + "]" * 1000 + "\n", (), None),
    ("duplicate-top-key", "schema_version: 1\ntitle: a\ntitle: b\n", ("title", "twice"), 3),
    ("duplicate-op-key", gemm("m: 1", "n: 2", "m: 3"), ("operations[0]", "'m'", "twice"), 9),
    ("syntax-error", "schema_version: 1\ntitle: ok\nbroken: a: b\noperations: []\n",
     ("YAML",), 3),
    ("unclosed-flow", "schema_version: 1\nhardware:\n  - preset: l4\nview: {theme: light\n",
     ("YAML",), None),
    ("unclosed-quote", 'schema_version: 1\ntitle: "never closed\n', ("YAML",), None),
    ("tab-indent", "schema_version: 1\noperations:\n\t- kind: gemm\n", ("YAML",), 3),
    # units
    ("lowercase-unit", machine("{bf16: 1 TFLOP/s}", "{hbm: 3.35 tb/s}"),
     ("hardware[0].memory.hbm", "case-sensitive", "TB/s"), 5),
    ("wrong-unit", machine("{bf16: 1 TFLOP/s}", "{hbm: 3 GB}"),
     ("hardware[0].memory.hbm", "B/s", "3 GB"), 5),
    ("milli-is-not-mega", machine("{bf16: 1 TFLOP/s}", "{hbm: 3 mB/s}"),
     ("hardware[0].memory.hbm", "prefix", "'m'"), 5),
    ("rate-for-compute", machine("{bf16: 100 TB/s}"),
     ("hardware[0].compute.bf16", "FLOP/s"), 4),
    ("unit-on-size", gemm("m: 4 GB"), ("operations[0].m",), 7),
    ("time-unit-wrong", "schema_version: 1\nhardware:\n  - preset: l4\n    launch_overhead: 8 GB\n",
     ("hardware[0].launch_overhead", "s"), 4),
]
PYTHON_TAGS = [
    ("python-object",
     "schema_version: 1\ntitle: !!python/object:os.system {{}}\nmarker: {marker}\n"),
    ("python-apply-echo", '!!python/object/apply:os.system ["echo hi > {marker}"]\n'),
    ("python-apply-nested",
     "schema_version: 1\noperations:\n  - kind: gemm\n"
     '    m: !!python/object/apply:os.system ["echo hi > {marker}"]\n'),
    ("python-name", "schema_version: 1\ntitle: !!python/name:os.system ''\n"),
    ("python-module", "schema_version: 1\ntitle: !!python/module:os ''\n"),
]


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / f"{name}.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _refused(path: Path) -> str:
    with pytest.raises(InputError) as info:
        load_session(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    assert "Traceback" not in message
    assert str(path) in message, message
    return message


def test_case_ids_are_unique():
    ids = [case[0] for case in CASES] + [case[0] for case in PYTHON_TAGS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("content", "fragments", "line"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_malformed_session_is_refused(tmp_path, content, fragments, line):
    path = _write(tmp_path, "bad", content)
    message = _refused(path)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if line is not None:
        assert message.startswith(f"{path}:{line}: "), message


def test_billion_laughs_really_is_nine_levels():
    # the premise of the alias-bomb case: 9 levels of 9 aliases = 9**9 strings when expanded
    assert BILLION_LAUGHS.count("*lol") == 81
    assert BILLION_LAUGHS.count("\n") == 11


@pytest.mark.parametrize("template", [t for _, t in PYTHON_TAGS], ids=[n for n, _ in PYTHON_TAGS])
def test_python_tags_are_refused_without_running_anything(tmp_path, capfd, template):
    marker = tmp_path / "marker"
    path = _write(tmp_path, "tag", template.format(marker=marker))
    message = _refused(path)
    assert "tag" in message
    assert "python/" in message
    assert not marker.exists()
    out, _err = capfd.readouterr()
    assert "hi" not in out


def test_missing_file_and_folder(tmp_path):
    message = _refused(tmp_path / "nope.yaml")
    assert "no such file" in message
    with pytest.raises(InputError) as info:
        load_session(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert "folder" in str(info.value)


def test_huge_file_is_refused_by_size_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as handle:
        handle.write(b"schema_version: 1\ntitle: ")
        handle.truncate(50 * 1024 * 1024)  # sparse: instant, no 50 MB written
    assert path.stat().st_size == 50 * 1024 * 1024

    def no_reading(*args, **kwargs):
        raise AssertionError("the file was read")

    real_open = builtins.open
    real_io_open = io.open

    def guarded_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise AssertionError("the file was opened")
        return real_open(file, *args, **kwargs)

    def guarded_io_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise AssertionError("the file was opened")
        return real_io_open(file, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_bytes", no_reading)
    monkeypatch.setattr(pathlib.Path, "read_text", no_reading)
    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_io_open)
    message = _refused(path)  # (without reading it: the guards above fail a read)
    assert "MB" in message
    # says how big it is: 50 MiB = 52.4 MB
    assert any(size in message for size in ("52.4 MB", "50 MiB", "50.0 MiB")), message


def test_bytes_and_text_inputs_agree_on_nul(tmp_path):
    with pytest.raises(InputError) as info:
        loads_session(b"schema_version: 1\ntitle: a\x00b\n", "nul.yaml")
    assert "nul.yaml" in str(info.value)


# ---------------------------------------------------------------------------------------------
# mutation fuzzing

EXAMPLE_TEXTS = {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES}
TOKENS = [":", "- ", "  ", "\n", "[", "]", "{", "}", ",", "&a ", "*a", "!!", "'", '"', "#", "|",
          ">", "%", "@", "`", "\t", "0", "-1", "1e400", ".inf", ".nan", "null", "~", "true",
          "yes", "no", "\x07", "\x1b", "0x1F", "0o17", "1_000", "3.35 TB/s", "3.35 tb/s", "µs",
          "2**53",
          "9007199254740993", "kind: ", "gemm", "attention", "preset: ", "schema_version: 2",
          "<<: ", "!!python/object/apply:os.system [x]", "\ufeff", "\u2028", "\x85", "é", "😀"]


# control characters come from TOKENS, "unicode" and the raw-bytes path, not from every edit
PRINTABLE = st.characters(blacklist_categories=("Cs", "Cc"))


@st.composite
def mutated(draw, text: str) -> str | bytes:
    for _ in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(("delete", "insert", "replace", "line-delete",
                                       "line-duplicate", "line-swap", "swap-values", "truncate",
                                       "token", "unicode")))
        n = len(text)
        if n == 0:
            text = draw(st.sampled_from(TOKENS))
            continue
        i = draw(st.integers(0, n - 1))
        if action == "delete":
            j = draw(st.integers(i, min(n, i + 20)))
            text = text[:i] + text[j:]
        elif action == "insert":
            text = text[:i] + draw(st.text(PRINTABLE, max_size=10)) + text[i:]
        elif action == "replace":
            text = text[:i] + draw(PRINTABLE) + text[i + 1:]
        elif action == "token":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif action == "unicode":
            # any code point above ASCII that a file can hold (lone surrogates cannot)
            text = text[:i] + draw(st.text(st.characters(min_codepoint=0x80, exclude_categories=(
                "Cs",)), min_size=1, max_size=4)) + text[i:]
        elif action == "truncate":
            text = text[:i]
        else:
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            if action == "line-delete":
                del lines[a]
            elif action == "line-duplicate":
                lines.insert(b, lines[a])
            elif action == "line-swap":
                lines[a], lines[b] = lines[b], lines[a]
            else:  # swap the values of two "key: value" lines
                if ": " in lines[a] and ": " in lines[b]:
                    ka, va = lines[a].split(": ", 1)
                    kb, vb = lines[b].split(": ", 1)
                    lines[a], lines[b] = f"{ka}: {vb}", f"{kb}: {va}"
            text = "\n".join(lines)
    if draw(st.integers(0, 19)) == 0:  # now and then, raw bytes that may not be UTF-8
        raw = text.encode("utf-8", "surrogatepass")
        k = draw(st.integers(0, len(raw)))
        return raw[:k] + draw(st.binary(min_size=1, max_size=4)) + raw[k:]
    return text


FUZZ = settings(max_examples=max(60, 1200 // max(1, len(EXAMPLE_TEXTS))), deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.filter_too_much, HealthCheck.data_too_large])


@pytest.mark.parametrize("example", sorted(EXAMPLE_TEXTS))
@FUZZ
@given(data=st.data())
def test_mutated_example_loads_or_is_refused(example, data):
    content = data.draw(mutated(EXAMPLE_TEXTS[example]), label="content")
    try:
        result = loads_session(content, "fuzz.yaml")
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message
        assert message.startswith("fuzz.yaml"), message
    else:
        assert isinstance(result, Session)
