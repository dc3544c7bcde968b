"""Fails when docs/cli.md lacks a subcommand or a flag that `tgc <sub> --help` lists.
usage: check_cli_doc.py TGC CLI_MD"""
import re
import subprocess
import sys

tgc, doc_path = sys.argv[1], sys.argv[2]
doc = open(doc_path).read()
top = subprocess.run([tgc, "--help"], capture_output=True, text=True, check=True).stdout
subs = re.findall(r"^  ([a-z][a-z-]*) {2,}", top.split("Subcommands:", 1)[1], re.M)
missing = []
for sub in subs:
    if f"## tgc {sub}\n" not in doc:
        missing.append(f"section '## tgc {sub}'")
        continue
    help_text = subprocess.run([tgc, sub, "--help"], capture_output=True, text=True, check=True).stdout
    options = help_text.split("Options:", 1)[1].split("\n\n", 1)[0]
    for flag in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", options)) - {"--help"}):
        if not re.search(r"`[^`]*" + re.escape(flag) + r"(?![\w-])", doc):
            missing.append(f"{sub} {flag}")
print(f"subcommands: {' '.join(subs)}")
if missing:
    print("docs/cli.md lacks: " + ", ".join(missing))
    sys.exit(1)
print("docs/cli.md covers every flag")
