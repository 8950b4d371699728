"""One step of ../shared/eval run for a benchmark script: its output, or the script stops naming the step."""
import subprocess, sys


def run_step(command, env, who):
    """Runs `command` with `env`; on failure exits with `who`, the command and the end of its output."""
    r = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"{who}: {' '.join(command[:3])} failed ({r.returncode}):\n{r.stdout[-3000:]}")
    return r.stdout
