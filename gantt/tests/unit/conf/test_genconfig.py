"""The generated sample config: complete, current, and no global CONF."""

import os
import pathlib

from oslo_config import generator

from gantt.conf import opts

ROOT = pathlib.Path(__file__).resolve().parents[4]
SAMPLE = ROOT / "etc" / "gantt" / "gantt.conf.sample"


def _generate(tmp_path):
    out = tmp_path / "gantt.conf.sample"
    generator.main(["--namespace", "gantt", "--output-file", str(out),
                    "--wrap-width", "79"])
    return out.read_text()


def test_the_generator_writes_every_gantt_option(tmp_path):
    text = _generate(tmp_path)
    for group, options in opts.list_opts():
        assert "[%s]" % group.name in text
        for opt in options:
            assert "\n#%s =" % opt.dest in text, (group.name, opt.dest)


def test_the_committed_sample_is_current(tmp_path):
    """Regenerate with ``tox -e genconfig`` when this fails."""
    committed = SAMPLE.read_text()
    fresh = _generate(tmp_path)
    for line in fresh.splitlines():
        if line.startswith("#") and " = " in line:
            assert line in committed, "stale sample: %s" % line


def test_no_global_conf_in_the_scheduler():
    # options are passed in, never imported (tests build fresh ConfigOpts)
    offenders = []
    for path in (ROOT / "gantt" / "scheduler").rglob("*.py"):
        text = path.read_text()
        if "cfg.CONF" in text:
            offenders.append(os.fspath(path.relative_to(ROOT)))
    assert offenders == []
