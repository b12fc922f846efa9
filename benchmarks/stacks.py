"""Summarise py-spy's raw (collapsed) stacks: where a process spends time.

    py-spy record -p PID -d 10 -f raw -o out.raw
    python benchmarks/stacks.py out.raw [--top 25] [--match gantt/]

Prints the functions with the largest inclusive share of the samples
(a function counts once per sample however deep it recurses), and the
largest self shares, as ``file:function``.
"""

import argparse
import collections
import re
import sys

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>.*?)(?::\d+)?\)$")


def _short(path):
    for marker in ("/gantt/", "/site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1] if marker != "/gantt/" else (
                "gantt/" + path.split(marker, 1)[1])
    return path


def parse(lines, within=None):
    """``(samples, inclusive Counter, self Counter)`` of ``file:function``.

    :param within: only samples whose stack has a frame containing this
        (e.g. ``select_destinations``: the request threads, busy or not)
    """
    inclusive = collections.Counter()
    own = collections.Counter()
    total = 0
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        if within and within not in stack:
            continue
        try:
            count = int(count)
        except ValueError:
            continue
        names = []
        for frame in stack.split(";"):
            m = _FRAME.match(frame)
            names.append("%s:%s" % (_short(m.group("file")), m.group("func"))
                         if m else frame)
        total += count
        for name in set(names):
            inclusive[name] += count
        if names:
            own[names[-1]] += count
    return total, inclusive, own


def summary(path, top=25, match=None, within=None):
    with open(path) as f:
        total, inclusive, own = parse(f, within)
    out = {"samples": total, "inclusive": [], "self": []}
    for kind, counter in (("inclusive", inclusive), ("self", own)):
        for name, count in counter.most_common():
            if match and match not in name:
                continue
            out[kind].append((name, round(100.0 * count / max(total, 1), 1)))
            if len(out[kind]) >= top:
                break
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default=None,
                        help="only functions whose file:name contains this")
    parser.add_argument("--within", default=None,
                        help="only samples whose stack contains this")
    args = parser.parse_args()
    result = summary(args.raw, args.top, args.match, args.within)
    print("%d samples" % result["samples"])
    for kind in ("inclusive", "self"):
        print("\n%s %%:" % kind)
        for name, pct in result[kind]:
            print("  %5.1f  %s" % (pct, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
