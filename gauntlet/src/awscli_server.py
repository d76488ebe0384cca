"""The AWS CLI kept running for the gauntlet's witness.

Reads one JSON array of CLI arguments per line of stdin, runs it as `aws`
would, in this process, and answers one JSON object per line on stdout:
{"code": exit code, "stdout": ..., "stderr": ...}. The CLI's import and
its driver (the botocore session, every plugin's event handlers, the
command table: about 0.3 s of CPU a call, 8 times the call itself) are
made once per process instead of per call. Every call passes the same
global options (`--output json --endpoint-url ...`), so nothing one call
sets on the session differs for the next: the answers are the same as a
new driver's, error messages included.
"""

import io
import json
import sys

from awscli.clidriver import create_clidriver


def run(driver, args):
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        code = driver.main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except Exception as e:  # the CLI's own bug: report it as a failed call
        err.write(f"{type(e).__name__}: {e}")
        code = 255
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main():
    # argparse names the program from argv[0] in its usage errors.
    sys.argv = ["aws"]
    answers = sys.__stdout__
    driver = create_clidriver()
    for line in sys.stdin:
        answers.write(json.dumps(run(driver, json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
