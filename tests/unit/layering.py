#!/usr/bin/env python3
"""The parts' layering, checked from the include lines (CTest unit_layering).

Reads the parts table of src/README.md (part, level, owns, also may include, never includes),
then every
#include "slimtrain/<part>/..." line under src/<part>/ and include/slimtrain/<part>/, and fails,
naming the file, the line and the include, when a part includes a part on a higher level, or one
on its own level that the table does not allow; also when a directory and the table disagree.
apps/ may include cli (and core) only.

  layering.py ROOT            check the tree at ROOT
  layering.py ROOT --planted  copy the tree, plant a data/ -> comm/ and a model/ -> ckpt/
                              include, and succeed only if the check fails naming both
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"slimtrain/([a-z_]+)/')
ROW = re.compile(r"^\|\s*([a-z_]+)\s*\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|([^|]*)\|\s*$")


def read_table(root):
    table = {}
    for line in (root / "src" / "README.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            also = {p.strip() for p in m.group(3).split(",") if p.strip()}
            never = {p.strip() for p in m.group(4).split(",") if p.strip()}
            table[m.group(1)] = (int(m.group(2)), also, never)
    return table


def check(root):
    problems = []
    table = read_table(root)
    if not table:
        return ["src/README.md: no parts table (| part | level | owns | also | never |)"]
    for top in (root / "src", root / "include" / "slimtrain"):
        dirs = {d.name for d in top.iterdir() if d.is_dir()}
        for d in sorted(dirs - table.keys()):
            problems.append(f"{top.relative_to(root)}/{d}: a part missing from src/README.md's table")
        for p in sorted(table.keys() - dirs):
            problems.append(f"src/README.md: part '{p}' has no directory {top.relative_to(root)}/{p}")
    for part, (level, also, never) in sorted(table.items()):
        for top in (root / "src" / part, root / "include" / "slimtrain" / part):
            if not top.is_dir():
                continue
            for f in sorted(top.rglob("*")):
                if f.suffix not in (".cpp", ".hpp", ".h", ".cc"):
                    continue
                for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) == part:
                        continue
                    other = m.group(1)
                    where = f"{f.relative_to(root)}:{n}: {line.strip()}"
                    if other not in table:
                        problems.append(f"{where}: '{other}' is not a part")
                    elif other in never:
                        problems.append(f"{where}: {part} never includes {other} (src/README.md)")
                    elif table[other][0] > level:
                        problems.append(f"{where}: {part} (level {level}) includes {other} "
                                        f"(level {table[other][0]}), a part above it")
                    elif table[other][0] == level and other not in also:
                        problems.append(f"{where}: {part} and {other} stand on one level "
                                        f"({level}) and the table does not let {part} include it")
    for f in sorted((root / "apps").glob("*.cpp")):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) not in ("cli", "core"):
                problems.append(f"{f.relative_to(root)}:{n}: {line.strip()}: apps/ includes cli only")
    return problems


def planted(root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp)
        for d in ("src", "include", "apps"):
            shutil.copytree(root / d, copy / d)
        victim = sorted((copy / "src" / "data").glob("*.cpp"))[0]
        victim.write_text('#include "slimtrain/comm/control_plane.hpp"\n' + victim.read_text())
        header = sorted((copy / "include" / "slimtrain" / "model").glob("*.hpp"))[0]
        header.write_text(header.read_text() + '\n#include "slimtrain/ckpt/layout.hpp"\n')
        run = subprocess.run([sys.executable, __file__, str(copy)], capture_output=True, text=True)
        print(run.stdout, end="")
        want = [f"{victim.relative_to(copy)}:1: #include \"slimtrain/comm/control_plane.hpp\": "
                "data never includes comm",
                f"{header.relative_to(copy)}:"]
        if run.returncode == 0 or not all(w in run.stdout for w in want):
            print("FAIL: the planted violations were not both reported")
            return 1
        print("ok: the planted data -> comm and model -> ckpt includes were reported")
        return 0


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    if "--planted" in sys.argv[2:]:
        return planted(root)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layering of src/README.md")
        return 1
    print("layering holds: every include runs down the levels of src/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
