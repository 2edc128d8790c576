#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks libm2icore's installed interface, as an application sees it.

Installs the build into a staging folder (meson install --destdir), then:

1. every symbol the installed libm2icore.so exports (nm -D --defined-only) is
   declared with M2I_API in an installed header, and every M2I_API
   declaration is exported (nothing private leaks, nothing public is missing);
2. every function an installed header declares (static inline ones aside)
   carries M2I_API;
3. a program outside the tree that includes <m2i-core/m2i-core.h> builds with
   the staged `pkg-config m2i-core` alone, links and runs.

Usage: check-exports.py MESON BUILDDIR CC [SANITIZE]
(SANITIZE: meson's b_sanitize; the outside program is built with it, as a
sanitized libm2icore needs.)
Exit 0 on success, 77 (skip) when a tool is missing, 1 with the reasons.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def strip_header(text):
    """The header as C declarations: no comments, no preprocessor lines, no
    G_BEGIN_DECLS/G_END_DECLS."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'\\\n', ' ', text)
    text = re.sub(r'^\s*#[^\n]*', ' ', text, flags=re.M)
    return re.sub(r'\bG_(BEGIN|END)_DECLS\b', ' ', text)


def statements(text):
    """Top-level statements: up to a ';' outside braces, or a function body."""
    out, cur, depth = [], [], 0
    for ch in text:
        cur.append(ch)
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                s = ''.join(cur)
                head = s[:s.index('{')]
                if '(' in head and not re.match(r'\s*(typedef|struct|union|enum)\b', head):
                    out.append(s.strip())          # an inline function's body
                    cur = []
        elif ch == ';' and depth == 0:
            out.append(''.join(cur).strip())
            cur = []
    return [s for s in out if s]


def declared_names(path, problems):
    """Names the header declares with M2I_API; adds to @problems the
    functions and extern variables it declares without it."""
    names = set()
    for s in statements(strip_header(open(path, encoding='utf-8').read())):
        flat = ' '.join(s.split())
        if re.match(r'(typedef|struct|union|enum)\b', flat) or re.search(r'\bstatic\b', flat):
            continue
        if '{' in flat:
            continue
        head = flat.split('(')[0]
        if 'M2I_API' not in flat:
            if '(' in flat or re.match(r'extern\b', flat):
                problems.append('%s: declared without M2I_API: %s' % (path, flat))
            continue
        if '(' in flat:
            m = re.search(r'(\w+)\s*$', head)
        else:
            m = re.search(r'(\w+)\s*(\[[^\]]*\]\s*)*(=.*)?;$', flat)
        if not m or '(*' in flat.replace(' ', ''):
            problems.append('%s: cannot read the name of: %s' % (path, flat))
            continue
        names.add(m.group(1))
    return names


def find(root, name):
    for d, _, files in os.walk(root):
        if name in files:
            return os.path.join(d, name)
    return None


def main():
    meson, builddir, cc = sys.argv[1:4]
    sanitize = sys.argv[4] if len(sys.argv) > 4 else 'none'
    extra = [] if sanitize in ('', 'none') else ['-fsanitize=' + sanitize]
    for tool in ('nm', 'pkg-config'):
        if not shutil.which(tool):
            print('SKIP: %s not found' % tool)
            return 77
    problems = []
    with tempfile.TemporaryDirectory(prefix='m2i-install-') as stage:
        subprocess.run([meson, 'install', '-C', builddir, '--no-rebuild', '--quiet',
                        '--destdir', stage], check=True, stdout=subprocess.DEVNULL)
        header = find(stage, 'm2i-core.h')
        lib = find(stage, 'libm2icore.so')
        pc = find(stage, 'm2i-core.pc')
        if not header or not lib or not pc:
            print('FAIL: the staged install lacks m2i-core.h, libm2icore.so or m2i-core.pc')
            return 1
        include_root = os.path.dirname(header)             # .../include/m2i-core
        declared = set()
        n_headers = 0
        for d, _, files in os.walk(include_root):
            for f in sorted(files):
                if f.endswith('.h'):
                    n_headers += 1
                    declared |= declared_names(os.path.join(d, f), problems)

        nm = subprocess.run(['nm', '-D', '--defined-only', lib], check=True,
                            capture_output=True, text=True).stdout
        exported = set()
        for line in nm.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBRVWiu' + 'tdbr':
                exported.add(parts[2])
        for name in sorted(exported - declared):
            problems.append('exported but declared in no installed header: %s' % name)
        for name in sorted(declared - exported):
            problems.append('declared with M2I_API but not exported: %s' % name)

        # An application outside the tree. The .pc names the real prefix:
        # point a copy of it at the staged one (glib's .pc stays the system's).
        pcdir = os.path.join(stage, 'pkgconfig')
        os.mkdir(pcdir)
        with open(pc) as f:
            text = f.read()
        text = re.sub(r'^prefix=(.*)$', lambda m: 'prefix=' + stage + m.group(1), text,
                      count=1, flags=re.M)
        with open(os.path.join(pcdir, 'm2i-core.pc'), 'w') as f:
            f.write(text)
        env = dict(os.environ)
        env['PKG_CONFIG_PATH'] = os.pathsep.join(
            [pcdir] + [p for p in [os.environ.get('PKG_CONFIG_PATH')] if p])
        flags = subprocess.run(['pkg-config', '--cflags', '--libs', 'm2i-core'], env=env,
                               check=True, capture_output=True, text=True).stdout.split()
        app = os.path.join(stage, 'app.c')
        with open(app, 'w') as f:
            f.write('#include <m2i-core/m2i-core.h>\n'
                    '#include <m2i-core/ir/m2i-ir.h>\n'
                    '#include <stdio.h>\n'
                    'int main (void)\n{\n'
                    '  M2iShape s = { 2, { 3, 4 } };\n'
                    '  printf ("%s %" G_GINT64_FORMAT "\\n", m2i_cpu_flags_string (),'
                    ' m2i_shape_numel (&s));\n'
                    '  return m2i_shape_numel (&s) == 12 ? 0 : 1;\n}\n')
        exe = os.path.join(stage, 'app')
        build = subprocess.run(cc.split() + extra + ['-std=gnu11', '-Wall', '-Werror', app, '-o', exe] + flags,
                               capture_output=True, text=True)
        if build.returncode != 0:
            problems.append('an application using <m2i-core/m2i-core.h> and pkg-config does not '
                            'build:\n' + build.stderr)
        else:
            env['LD_LIBRARY_PATH'] = os.path.dirname(lib)
            run = subprocess.run([exe], env=env, capture_output=True, text=True)
            if run.returncode != 0:
                problems.append('the application built against the staged install fails: '
                                + run.stdout + run.stderr)

    print('%d installed headers, %d M2I_API declarations, %d exported symbols'
          % (n_headers, len(declared), len(exported)))
    for p in problems:
        print('FAIL: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
