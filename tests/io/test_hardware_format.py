"""Machine figures beside the matrix peaks: vector peaks, measured figures, binary capacities.

Each is read with the usual one-line errors, round-trips through a saved session exactly and
reaches the model (the vector table is the roof of vector work)."""

from __future__ import annotations

import pytest

from workbench.io.errors import InputError
from workbench.io.sessions import dumps_session, load_session, loads_session, save_session
from workbench.model.hardware import Hardware, UnsupportedPrecision

H100_LIKE = """\
schema_version: 1
hardware:
  - name: Mine
    compute: {fp64: 67 TFLOP/s, fp32: 67 TFLOP/s, bf16: 989.4 TFLOP/s, int8: 1979 TOP/s}
    vector_compute: {fp64: 34 TFLOP/s, fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s, int32: 33.5 TOP/s}
    memory: {hbm: 3.35 TB/s, l2: 12 TB/s}
    capacity: 81559 MiB
    launch_overhead: 8 us
    measured: [memory.l2, vector_compute.bf16]
"""


def machine_of(text: str) -> Hardware:
    return loads_session(text, "mine.yaml").hardware[0].hardware


def test_vector_peaks_and_measured_figures_are_read():
    hw = machine_of(H100_LIKE)
    assert hw.compute["bf16"] == 989.4e12
    assert hw.vector_compute == {"fp64": 34e12, "fp32": 67e12, "bf16": 133.8e12,
                                 "int32": 33.5e12}
    assert hw.capacity == 81559 * 2**20  # binary: 85.52e9 bytes, not 81.559e9
    assert hw.measured == ["memory.l2", "vector_compute.bf16"]
    assert hw.figure_status("memory.l2") == "measured"
    assert hw.figure_status("memory.hbm") == "specified"
    assert hw.figure_status("vector_compute.bf16") == "measured"
    assert hw.figure_status("compute.bf16") == "specified"
    # the launch overhead is a rule of thumb unless a machine lists it as measured
    assert hw.figure_status("launch_overhead") == "rule of thumb"
    listed = machine_of(H100_LIKE.replace("vector_compute.bf16]",
                                          "vector_compute.bf16, launch_overhead]"))
    assert listed.figure_status("launch_overhead") == "measured"


@pytest.mark.parametrize("text, unit, expected", [
    ("80 GiB", "bytes", 80 * 2**30),
    ("81559 MiB", "bytes", 85_520_809_984),
    ("143771 MiB", "bytes", 150_754_820_096),
    ("1.5 TiB", "bytes", 1_649_267_441_664),
    ("95 GiB", "bytes", 102_005_473_280),
])
def test_binary_capacities_are_powers_of_two(text, unit, expected):
    from workbench.model.units import parse_quantity

    assert parse_quantity(text, unit) == expected


def test_vector_work_meets_the_vector_peak_and_matrix_work_the_matrix_peak():
    hw = machine_of(H100_LIKE)
    vector = hw.ceiling("bf16", "vector")
    assert (vector.peak, vector.precision, vector.unit) == (133.8e12, "bf16", "vector")
    matrix = hw.ceiling("bf16", "matrix")
    assert (matrix.peak, matrix.precision, matrix.unit) == (989.4e12, "bf16", "matrix")
    assert hw.ridge("bf16", unit="vector") == pytest.approx(133.8e12 / 3.35e12)
    # a machine with no vector figures judges vector work on its matrix peaks, and says so
    bare = Hardware("bare", compute={"bf16": 100e12}, memory={"hbm": 1e12})
    stand_in = bare.ceiling("bf16", "vector")
    assert (stand_in.peak, stand_in.unit, stand_in.wanted) == (100e12, "matrix", "vector")
    assert "no vector peaks" in stand_in.note


def test_a_changed_peak_is_seen_by_the_next_ceiling():
    hw = machine_of(H100_LIKE)
    assert hw.peak("bf16", "vector") == 133.8e12
    hw.vector_compute["bf16"] = 100e12
    assert hw.peak("bf16", "vector") == 100e12
    del hw.vector_compute["bf16"]
    assert hw.ceiling("bf16", "vector").precision == "fp32"  # the next wider vector peak
    del hw.vector_compute["fp32"], hw.vector_compute["fp64"]
    with pytest.raises(UnsupportedPrecision, match="no bf16 vector peak"):
        hw.peak("bf16", "vector")


def test_round_trip_through_a_saved_file(tmp_path):
    session = loads_session(H100_LIKE, "mine.yaml")
    path = tmp_path / "mine.yaml"
    save_session(session, path)
    text = path.read_text(encoding="utf-8")
    assert "81559 MiB" in text  # a binary capacity is written in binary units
    assert "vector_compute:" in text and "measured:" in text
    again = load_session(path)
    assert again.hardware[0].hardware == session.hardware[0].hardware
    assert dumps_session(again) == text


def test_a_measured_mark_of_a_removed_level_is_dropped_on_save(tmp_path):
    session = loads_session(H100_LIKE, "mine.yaml")
    hw = session.hardware[0].hardware
    del hw.memory["l2"]
    again = loads_session(dumps_session(session), "again.yaml")
    assert again.hardware[0].hardware.measured == ["vector_compute.bf16"]


@pytest.mark.parametrize("replace, fragments, line", [
    ("vector_compute: {fp64: 34 TFLOP/s, fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s, int32: 33.5 TOP/s}",
     ("hardware[0].vector_compute.bf17", "unknown precision", "bf16"),
     "vector_compute: {bf17: 1 TFLOP/s}"),
    ("vector_compute: {fp64: 34 TFLOP/s, fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s, int32: 33.5 TOP/s}",
     ("hardware[0].vector_compute.fp32", "FLOP/s", "3 TB/s"),
     "vector_compute: {fp32: 3 TB/s}"),
    ("vector_compute: {fp64: 34 TFLOP/s, fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s, int32: 33.5 TOP/s}",
     ("hardware[0].vector_compute.fp32", "must be positive"),
     "vector_compute: {fp32: 0}"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured[0]", "'memory.l3'", "has no 'l3' in memory", "hbm, l2"),
     "measured: [memory.l3]"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured[0]", "unknown table 'memroy'", "did you mean 'memory'"),
     "measured: [memroy.l2]"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured[0]", "'l2' is not a figure path", "memory.l2"),
     "measured: [l2]"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured[1]", "listed twice"),
     "measured: [memory.l2, memory.l2]"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured", "must be a list"),
     "measured: memory.l2"),
    ("measured: [memory.l2, vector_compute.bf16]",
     ("hardware[0].measured[0]", "gives no efficiency"),
     "measured: [efficiency]"),
    ("capacity: 81559 MiB", ("hardware[0].capacity", "unknown prefix", "mi"),
     "capacity: 80 miB"),
])
def test_bad_figures_are_refused_with_one_line(tmp_path, replace, fragments, line):
    text = H100_LIKE.replace(replace, line)
    assert text != H100_LIKE
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_session(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_cli_refuses_a_bad_measured_path(tmp_path, capsys):
    from workbench.cli import main

    path = tmp_path / "mine.yaml"
    path.write_text(H100_LIKE.replace("memory.l2,", "memory.l9,"), encoding="utf-8")
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "mine.yaml:9: hardware[0].measured[0]" in err
