"""One Python interpreter for an e2e script's many checks (lib.sh's py_start and py).

Importing torch and transformers costs 2-4 s on the test machines, more than most checks
themselves: e2e_hf_models made 47 such calls. The shell writes a request file (the arguments
separated by NUL, as `python ARGS...` would get them) and sends "REQUEST<TAB>OUTPUT" on a line;
this runs the script as __main__ (or `-c CODE`) with its stdout and stderr, the C++ side's too, in
OUTPUT, and answers the exit code on a line.
"""
import os
import runpy
import sys
import traceback


def run(argv):
    sys.argv = list(argv)
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            try:
                runpy.run_path(argv[0], run_name="__main__")
            finally:
                sys.path.pop(0)
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1


def main():
    answers = sys.stdout
    saved = (os.dup(1), os.dup(2))
    for line in sys.stdin:
        request, output = line.rstrip("\n").split("\t")
        with open(request, "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
        with open(output, "w") as out:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(out.fileno(), 1), os.dup2(out.fileno(), 2)
            sys.stdout, sys.stderr = os.fdopen(os.dup(1), "w"), os.fdopen(os.dup(2), "w")
            try:
                rc = run(argv)
            finally:
                sys.stdout.close(), sys.stderr.close()
                os.dup2(saved[0], 1), os.dup2(saved[1], 2)
                sys.stdout, sys.stderr = answers, sys.__stderr__
        answers.write(f"{rc}\n")
        answers.flush()


if __name__ == "__main__":
    main()
