"""Every Gantt command says which Gantt it is (``--version``)."""

from importlib import metadata

import pytest

from gantt.cmd import cli
from gantt.cmd import demo
from gantt.cmd import manage
from gantt.cmd import scheduler


@pytest.mark.parametrize("main", [scheduler.main, manage.main, cli.main,
                                  demo.main])
def test_version_is_printed_and_nothing_else_happens(main, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr()
    assert (out.out + out.err).strip() == metadata.version("gantt")
