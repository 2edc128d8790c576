#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every source file of m2i carries the project's licence identifier.

    spdx-headers.py SOURCE_DIR          check: name the files without one, exit 1
    spdx-headers.py SOURCE_DIR --fix    add it where it is missing

Source files: C (.c, .h), Python, JavaScript, meson.build, shell scripts
(a file whose first line is a shell shebang). The identifier goes on the
first line, or the second after a shebang.
"""
import os
import sys

LICENSE = "LGPL-2.1-or-later"
TAG = "SPDX-License-Identifier: " + LICENSE
SKIP_DIRS = {".git", "build", "build-asan", "build-tsan", "build-cov", "subprojects",
             "node_modules", "__pycache__"}


def comment_style(path):
    name = os.path.basename(path)
    if name.endswith((".c", ".h")):
        return "/* %s */" % TAG
    if name.endswith((".cjs", ".js")):
        return "// " + TAG
    if name.endswith(".py") or name == "meson.build" or name == "meson_options.txt":
        return "# " + TAG
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return None
    if first.startswith(b"#!") and (b"sh" in first or b"python" in first):
        return "# " + TAG
    return None


def source_files(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            line = comment_style(path)
            if line:
                yield path, line


def has_tag(text):
    return TAG in "\n".join(text.split("\n", 3)[:3])


def add_tag(text, line):
    if text.startswith("#!"):
        first, _, rest = text.partition("\n")
        return first + "\n" + line + "\n" + rest
    return line + "\n" + text


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top, fix = sys.argv[1], "--fix" in sys.argv[2:]
    missing = []
    for path, line in source_files(top):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if has_tag(text):
            continue
        if fix:
            with open(path, "w", encoding="utf-8") as f:
                f.write(add_tag(text, line))
        else:
            missing.append(os.path.relpath(path, top))
    if missing:
        print("files without '%s' on their first lines (add it: %s %s --fix):"
              % (TAG, sys.argv[0], top))
        for m in missing:
            print("  " + m)
        sys.exit(1)


if __name__ == "__main__":
    main()
