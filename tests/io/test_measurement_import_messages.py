"""Importing measured points (plain CSV and Nsight Compute): each refusal names the file, the
line or column and the problem; terminal text is escaped."""

from __future__ import annotations

import pytest

from workbench.io.errors import InputError
from workbench.io.limits import terminal_text
from workbench.io.measurements import parse_measurements_csv, parse_ncu_csv
from workbench.io.ncu import import_ncu_text

DESCRIPTIVE = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]




def test_control_characters_are_escaped_for_the_terminal():
    assert terminal_text("a\x1b[2Jb\u0085") == "a\\x1b[2Jb\\x85"
    assert terminal_text("x\ny", keep_lines=True) == "x\ny"


def test_a_time_too_large_to_be_finite_is_refused_with_a_reason():
    with pytest.raises(InputError) as err:
        parse_measurements_csv("name,time_s\ngemm,1e999\n", "m.csv")
    assert "finite" in str(err.value) and "1e999" in str(err.value)
    assert str(err.value).startswith("m.csv:2:")


def test_bad_csv_names_the_line_of_the_fault_not_where_the_record_began():
    with pytest.raises(InputError) as err:
        parse_measurements_csv('name,time_s\n"gemm\nsecond line"x,1\n', "m.csv")
    assert err.value.line == 3


@pytest.mark.parametrize("separator", [";", "\t"])
def test_columns_separated_by_semicolons_or_tabs_are_said_to_be(separator):
    # as a spreadsheet saves "CSV" where the decimal mark is a comma
    text = separator.join(["name", "operation", "time_us"]) + "\n"
    text += separator.join(["gemm", "FFN up", "35,5"]) + "\n"
    with pytest.raises(InputError) as err:
        parse_measurements_csv(text, "m.csv")
    assert str(err.value) == (f"m.csv:1: the columns are separated by {separator!r}, not by "
                              "commas: save the file as comma-separated CSV (with a decimal "
                              "point)")


def test_an_empty_measurements_file_says_so():
    with pytest.raises(InputError) as err:
        parse_measurements_csv("\n\n", "m.csv")
    assert str(err.value).startswith("m.csv: the file is empty (expected a header row: name")


def test_a_file_with_no_nsight_table_is_named():
    with pytest.raises(InputError) as err:
        parse_ncu_csv("==PROF== nothing\n", "run.csv")
    assert str(err.value).startswith("run.csv: no Nsight Compute table")


def test_tensor_flops_of_an_unlisted_type_are_counted_as_fp16():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "sm__ops_path_tensor_src_e4m3.sum"]
    lines = [",".join(f'"{c}"' for c in header),
             ",".join(f'"{c}"' for c in [""] * 11 + ["usecond", "byte", ""]),
             ",".join(f'"{c}"' for c in ["0", "1", "b", "h", "k", "1", "7", "(1, 1, 1)",
                                          "(1, 1, 1)", "0", "9.0", "1", "100", "1000"])]
    (m,) = parse_ncu_csv("\n".join(lines) + "\n", "t.csv")
    assert m.flops == 1000
    assert m.precision == "fp16"



def test_a_pasted_csv_without_a_file_name_names_its_rows_by_line():
    (m,) = parse_measurements_csv("name,operation,time_us\ngemm,mm,5\n")
    assert m.source == "CSV line 2"  # no file: the rows are still found by their line


def test_an_achieved_rate_out_of_range_names_the_achieved_tflops_column():
    # 10²⁰ TFLOP/s is 10³² FLOP/s, beyond any machine: the column the user wrote is named
    with pytest.raises(InputError) as err:
        parse_measurements_csv("name,achieved_tflops,flops\ngemm,1e20,1e12\n", "m.csv")
    assert err.value.path == ("achieved_tflops",) and err.value.line == 2


def test_a_units_row_with_an_id_is_quoted_from_the_id_column_wherever_it_stands():
    header = ["Kernel Name", "ID", "gpu__time_duration.sum", "dram__bytes.sum",
              "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in (
        header, ["", "7", "usecond", "byte", "inst"], ["k", "0", "1", "8", "1"])) + "\n"
    with pytest.raises(InputError) as err:
        parse_ncu_csv(text, "n.csv")
    assert "got '7'" in str(err.value) and err.value.path == ("ID",)


def test_a_kernel_whose_only_flop_counter_is_unavailable_is_listed_not_counted():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "sm__inst_executed_pipe_tensor.sum"]
    rows = [header, [""] * 11 + ["usecond", "byte", "inst"],
            ["0", "1", "bench", "host", "k", "1", "7", "(256, 1, 1)", "(80, 1, 1)", "0", "8.0",
             "10", "100", "n/a"]]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n"
    assert parse_ncu_csv(text, "n.csv") == []  # not a point at 0 FLOP/s
    result = import_ncu_text(text, "n.csv")
    assert result.measurements == []
    (left,) = result.not_counted
    assert (left.name, left.count, left.time_s) == ("k", 1, 10e-6)
    assert left.reason == "its FLOP counters are all n/a"
    assert result.counted_share == 0


def test_an_ncu_kernel_without_a_name_names_the_kernel_name_column():
    header = DESCRIPTIVE + ["gpu__time_duration.sum", "dram__bytes.sum",
                            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    rows = [header, [""] * 11 + ["usecond", "byte", "inst"],
            ["0", "1", "bench", "host", "", "1", "7", "(256, 1, 1)", "(80, 1, 1)", "0", "8.0",
             "10", "100", "5"]]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n"
    with pytest.raises(InputError) as err:
        parse_ncu_csv(text, "n.csv")
    assert err.value.path == ("Kernel Name",)
