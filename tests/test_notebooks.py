"""Notebooks: cells migrated together, magics and broken cells left alone, JSON kept byte for byte."""

import json
import re

import nbformat
import numpy as np
import pytest
from harness import cli as run

REGISTER = '@tf.RegisterGradient("FlipNb")\ndef _flip(op, grad):\n    return [-grad * 0.5]'
USE = ('def flip(x):\n    with tf.get_default_graph().gradient_override_map({"Identity": "FlipNb"}):\n'
       '        return tf.identity(x)')
BROKEN = 'print "py2"\nwith g.gradient_override_map({"Identity": "X"}):\n    y = tf.identity(x)'


def _notebook(path, cells):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = cells
    nbformat.write(nb, str(path))
    return path


@pytest.fixture
def notebook(tmp_path):
    return _notebook(tmp_path / "dann.ipynb", [
        nbformat.v4.new_code_cell("import tensorflow as tf"),
        nbformat.v4.new_code_cell(REGISTER, outputs=[nbformat.v4.new_output("stream", text="ok\n")],
                                  execution_count=2),
        nbformat.v4.new_markdown_cell("# Überblick: the flip is used *below*"),
        nbformat.v4.new_code_cell("%matplotlib inline"),
        nbformat.v4.new_code_cell(USE),
        nbformat.v4.new_code_cell(BROKEN),
    ])


def test_cells_are_migrated_together_and_the_rest_is_kept(notebook):
    before = json.loads(notebook.read_text())
    result = run(notebook, "--write")
    assert result.exit_code == 1, result.output  # written; a refused site (the broken cell) is left for the user
    after = json.loads(notebook.read_text())
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [1, 4]
    for i in changed:  # only the source changed, outputs and metadata kept
        assert {k: v for k, v in before["cells"][i].items() if k != "source"} == \
               {k: v for k, v in after["cells"][i].items() if k != "source"}
    assert "@tf.custom_gradient" in "".join(after["cells"][1]["source"])
    assert "return _flip(x)" in "".join(after["cells"][4]["source"])
    assert after["metadata"] == before["metadata"]
    # byte for byte: the file equals the original JSON with just those two sources replaced
    for i in changed:
        before["cells"][i]["source"] = after["cells"][i]["source"]
    assert notebook.read_text() == json.dumps(before, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    nbformat.validate(nbformat.read(str(notebook), as_version=4))  # still a valid notebook for Jupyter
    assert run(notebook, "--check").exit_code == 1  # the broken cell still holds an override
    assert "cell 6:1:1: GRL112" in run(notebook, "--check").stderr


def test_migrated_notebook_reverses_gradients(notebook):
    tf = pytest.importorskip("tensorflow")
    run(notebook, "--write")
    nb = json.loads(notebook.read_text())
    ns = {}
    for cell in nb["cells"][:5]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and not source.startswith("%"):
            exec(source, ns)
    x = tf.constant([1.0, -2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = ns["flip"](x)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [-0.5, -0.5])


def test_dry_run_shows_changed_cells(notebook):
    result = run(notebook)
    assert f"+++ b/{notebook}:cell 2" in result.stdout and f"+++ b/{notebook}:cell 5" in result.stdout
    assert ":cell 1" not in result.stdout


def test_refusal_is_reported_with_cell_line_col(tmp_path):
    path = _notebook(tmp_path / "enc.ipynb", [
        nbformat.v4.new_code_cell("import tensorflow as tf"),
        nbformat.v4.new_code_cell('x = 1\nwith tf.get_default_graph().gradient_override_map({"Identity": "F"}):\n'
                                  '    h = encoder(x)'),
    ])
    result = run(path, "--check")
    assert result.exit_code == 1
    assert f"{path}:cell 2:2:1: GRL10" in result.stderr


def test_invalid_json_is_a_reported_failure(tmp_path):
    path = tmp_path / "bad.ipynb"
    path.write_text('{"cells": [ gradient_override_map')
    result = run(tmp_path)
    assert result.exit_code == 123
    assert "GRL901" in result.stderr


SCRIPT = "import tensorflow as tf\ng = tf.get_default_graph()  # its gradient_override_map below\n"


@pytest.mark.parametrize("text", [SCRIPT, "\n# coding: utf-8\n\n# In[1]:\n\n\n" + SCRIPT + "\n\n# In[ ]:\n\n\n"
                                  "    misindented = 1\n"], ids=["parses", "nbconvert-marks"])
def test_a_notebook_exported_as_a_script_is_told_to_be_renamed(tmp_path, text):
    """`jupyter nbconvert --to script` output kept under .ipynb: Python, not JSON. Said so, with
    the one thing to do (a cell that does not parse still has its `# In[ ]:` marks)."""
    (tmp_path / "exported.ipynb").write_text(text)
    result = run(tmp_path)
    assert result.exit_code == 123
    assert "GRL901 this .ipynb holds Python source" in result.stderr and "rename it to .py" in result.stderr


def _other_writer(path, newline="\n"):
    """A notebook as other tools write it: indent 2, keys unsorted, sources as one string, ASCII escapes."""
    nb = {"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"name": "dann.ipynb"}},
          "cells": [{"cell_type": "code", "source": "import tensorflow as tf\n" + REGISTER, "metadata": {"id": "a1"},
                     "execution_count": None, "outputs": []},
                    {"cell_type": "markdown", "source": "Überblick", "metadata": {"id": "a2"}},
                    {"cell_type": "code", "source": USE, "metadata": {"id": "a3"}, "execution_count": None,
                     "outputs": []}]}
    text = json.dumps(nb, indent=2)
    path.write_bytes(text.replace("\n", newline).encode())
    return nb


def test_another_writers_formatting_is_kept(tmp_path):
    path = tmp_path / "colab.ipynb"
    nb = _other_writer(path)
    assert run(path, "--write").exit_code == 0
    after = json.loads(path.read_text())
    assert "@tf.custom_gradient" in after["cells"][0]["source"] and isinstance(after["cells"][0]["source"], str)
    nb["cells"][0]["source"], nb["cells"][2]["source"] = after["cells"][0]["source"], after["cells"][2]["source"]
    assert path.read_text() == json.dumps(nb, indent=2)  # same key order, indent, escapes, no final newline
    nbformat.validate(nbformat.reads(path.read_text(), as_version=4))


def test_crlf_notebook_keeps_its_newlines(tmp_path):
    path = tmp_path / "windows.ipynb"
    _other_writer(path, newline="\r\n")
    assert run(path, "--write").exit_code == 0
    data = path.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert "@tf.custom_gradient" in json.loads(data)["cells"][0]["source"]


def test_json_formatting_that_cannot_be_reproduced_is_refused_untouched(tmp_path):
    path = tmp_path / "odd.ipynb"
    _other_writer(path)
    path.write_text(path.read_text().replace('": ', '" : '))  # a writer with its own separators
    before = path.read_bytes()
    result = run(path, "--write")
    assert result.exit_code == 123 and "GRL906" in result.stderr
    assert path.read_bytes() == before


MAGIC_LINES = ["%matplotlib inline", "!pip install -q numpy", "files = !ls", "tf.identity?", "  %time 1 + 1"]


def test_cells_with_magics_are_migrated_and_keep_their_magics_byte_for_byte(tmp_path):
    tf = pytest.importorskip("tensorflow")
    cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nimport tensorflow as tf\n!pip install -q numpy"),
        nbformat.v4.new_code_cell("%%time\n" + REGISTER + "\nfiles = !ls\ntf.identity?\n" + USE),
        nbformat.v4.new_code_cell("def straight(x):\n    if x is None:\n      %time 1 + 1\n"
                                  "    with tf.get_default_graph().gradient_override_map({'Sign': 'Identity'}):\n"
                                  "        return tf.sign(x)"),
        nbformat.v4.new_code_cell("%%bash\necho 'with g.gradient_override_map({})'"),
        nbformat.v4.new_code_cell("def opaque(x):\n    with tf.get_default_graph().gradient_override_map("
                                  "{'Round': 'Identity'}):\n        %run make_model.py\n        return tf.round(x)"),
    ]
    path = _notebook(tmp_path / "magics.ipynb", cells)
    before = json.loads(path.read_text())
    result = run(path, "--write", "--no-cache")
    assert result.exit_code == 1, result.output  # written; the %run block stays refused, for the user
    after = json.loads(path.read_text())
    sources = ["".join(c["source"]) for c in after["cells"]]
    assert [i for i in range(5) if sources[i] != "".join(before["cells"][i]["source"])] == [1, 2]
    for line in [*MAGIC_LINES, "%%time"]:  # every magic is back where it was, byte for byte
        assert sum(line in s for s in sources) == sum(line in "".join(c["source"]) for c in before["cells"])
    assert sources[1].startswith("%%time\n@tf.custom_gradient") and "return _flip(x)" in sources[1]
    assert "      %time 1 + 1\n" in sources[2] and "_sign_straight_through(x)" in sources[2]
    assert "cell 4:1:1: GRL112" in result.output  # %%bash: not Python
    assert "cell 5:2:5: GRL101 the block calls an IPython magic" in result.output
    nbformat.validate(nbformat.read(str(path), as_version=4))
    ns = {}
    from tf_grl_migrate.migrator import notebooks

    for source in sources[:3]:  # run the migrated cells with each magic replaced by `pass`
        masked, _ = notebooks.mask(source)
        exec(re.sub(rf"(\w+ = )?{notebooks.MAGIC}\(\d+\)", "pass", masked), ns)
    x = tf.constant([1.0, -2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        flipped, signs = ns["flip"](x), ns["straight"](x)
    np.testing.assert_allclose(tape.gradient(flipped, x).numpy(), [-0.5, -0.5])
    np.testing.assert_allclose(tape.gradient(signs, x).numpy(), [1.0, 1.0])


def test_masking_round_trips_and_refuses_what_it_cannot_mask():
    from tf_grl_migrate.migrator import notebooks

    source = "%%timeit -n1\nx = 1  # why?\n%load_ext autoreload\n  !echo hi\nout = %sx ls\n?len\n"
    masked, saved = notebooks.mask(source)
    assert "x = 1  # why?" in masked  # a comment ending with ? is not help
    assert saved == ["%%timeit -n1", "%load_ext autoreload", "  !echo hi", "out = %sx ls", "?len"]
    assert notebooks.unmask(masked, saved) == source
    assert notebooks.mask("%%bash\nls\n") is None and notebooks.mask("%%writefile a.py\nx = 1\n") is None
    with pytest.raises(notebooks.NotebookError):
        notebooks.unmask(masked.replace(f"{notebooks.MAGIC}(1)", "pass"), saved)
