"""The notebooks run end to end with tiny settings (GOJAX_TINY=1), from their own folder as
Jupyter starts them."""

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scaling.ipynb", "evaluate.ipynb"])
def test_notebook_runs(name, tmp_path, monkeypatch):
    monkeypatch.setenv("GOJAX_TINY", "1")
    monkeypatch.setenv("GOJAX_OUT", str(tmp_path))
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    made = {"scaling.ipynb": ["selfplay/scaling.csv", "gnugo/scaling.png"], "evaluate.ipynb": ["ownership.png"]}
    assert all((tmp_path / f).exists() for f in made[name])
