# SPDX-License-Identifier: GPL-2.0
"""A LAVA server through Debian's lavacli (XML-RPC).

The identity (user and token) is in a lavacli.yaml of a private temporary
directory (XDG_CONFIG_HOME of each lavacli call): the token is on no command
line, and everything lavacli says passes through redact() (lavacli puts the
token in the URL of an HTTP error).  The loopback never goes through a
proxy; any other lab through the environment's (requests honours
http_proxy, https_proxy, no_proxy).  A failed call raises LavaError, its
message the one line the user reads.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.parse
import weakref
from typing import Any, Dict, Optional

from .common import write_private

IDENTITY = 'perf_aux'
TIMEOUT = 120


class LavaError(Exception):
    """A call that failed."""


def loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ''
    return host in ('localhost', '::1') or host.startswith('127.')


def read_token(url: str, default_file: str = '') -> str:
    """The token from LAVA_TOKEN, else the file LAVA_TOKEN_FILE, else
    default_file (the local lab's); whitespace removed."""
    token = os.environ.get('LAVA_TOKEN', '')
    if not token:
        path = os.environ.get('LAVA_TOKEN_FILE', '') or default_file
        if not path:
            raise LavaError(f'no token for {url}/: set LAVA_TOKEN or '
                            'LAVA_TOKEN_FILE')
        try:
            with open(path) as f:
                token = f.read()
        except OSError:
            raise LavaError(f'cannot read the token file {path}') from None
    token = ''.join(token.split())
    if not token:
        raise LavaError(f'the token for {url}/ is empty')
    return token


class Server:
    """The server at url, as user with token (anonymous without)."""

    def __init__(self, url: str, user: str = '', token: str = '') -> None:
        self.url = url.rstrip('/')
        self.token = token
        self.config = tempfile.mkdtemp(prefix='perf_aux-lavacli-')
        weakref.finalize(self, shutil.rmtree, self.config, True)
        identity: Dict[str, Any] = {'uri': f'{self.url}/RPC2',
                                    'timeout': TIMEOUT}
        if user and token:
            identity.update(username=user, token=token)
        write_private(os.path.join(self.config, 'lavacli.yaml'),
                      json.dumps({IDENTITY: identity}) + '\n')

    def redact(self, text: str) -> str:
        return text.replace(self.token, '<token>') if self.token else text

    def __call__(self, *args: str, what: str = '') -> str:
        """lavacli ARGS' output; LavaError with the reason when it fails
        (what: the job file a refusal names)."""
        env = dict(os.environ, XDG_CONFIG_HOME=self.config)
        if loopback(self.url):
            env = {k: v for k, v in env.items()
                   if not k.lower().endswith('_proxy')}
        try:
            p = subprocess.run(['lavacli', '-i', IDENTITY, *args], env=env,
                               capture_output=True, text=True,
                               timeout=TIMEOUT * 2)
        except FileNotFoundError:
            raise LavaError('no lavacli: python3 -m perf_aux deps') from None
        except subprocess.TimeoutExpired:
            raise LavaError(f'{self.url}/ unreachable: lavacli '
                            f'{" ".join(args[:2])} timed out') from None
        out = self.redact(p.stdout + p.stderr).strip()
        if p.returncode or out.startswith('Unable to'):
            raise LavaError(self.reason(out, what))
        return p.stdout

    def reason(self, out: str, what: str) -> str:
        """lavacli's complaint as one line."""
        fault = re.search(r'<Fault (\d+): (.*)>', out, re.S)
        http = re.search(r'\b(\d{3}) (?:Client|Server) Error: (.*?) for url',
                         out)
        if fault:
            try:
                why = str(ast.literal_eval(fault.group(2)))
            except (ValueError, SyntaxError):
                why = fault.group(2)
            why = ' '.join(why.split())
            if what and fault.group(1) == '400':
                return f'{self.url}/ refused {what} (HTTP 400): {why}'
            return f'{self.url}/: {fault.group(1)}: {why}'
        if http and http.group(1) in ('401', '403'):
            return (f'{self.url}/ refused the token (HTTP {http.group(1)}: '
                    f'{http.group(2)})')
        if http:
            return f'{self.url}/: HTTP {http.group(1)}: {http.group(2)}'
        if out.startswith('Unable to connect: '):
            errno = re.search(r'\[Errno -?\d+\] [^\'")]*', out)
            return (f'{self.url}/ unreachable: '
                    f'{errno.group(0) if errno else out[19:]}')
        return ' '.join(out.split()[:40]) or f'lavacli failed for {self.url}/'

    def json(self, *args: str) -> Any:
        text = self(*args, '--json')
        try:
            return json.loads(text)
        except ValueError:
            raise LavaError(f'{self.url}/: lavacli {" ".join(args[:2])}: '
                            'not JSON') from None

    def submit(self, path: str) -> int:
        """The job file at path submitted: its id."""
        out = self('jobs', 'submit', path, what=path).split()
        if not out or not out[0].isdigit():
            raise LavaError(f'{self.url}/ gave no job id for {path}')
        return int(out[0])

    def cancel(self, job: int) -> None:
        """Asks for job to be canceled (its state says what came of it)."""
        try:
            self('jobs', 'cancel', str(job))
        except LavaError:
            pass

    def job(self, job: int) -> Dict[str, Any]:
        return self.json('jobs', 'show', str(job))

    def log(self, job: int) -> str:
        """job's log, a "- {...}" line an entry (as LAVA's output.yaml)."""
        return self('jobs', 'logs', '--raw', '--no-follow', str(job))

    def state(self, kind: str, name: str) -> Optional[str]:
        """The state of worker or device name, None when unknown."""
        try:
            return self.json(f'{kind}s', 'show', name)['state']
        except (LavaError, KeyError, TypeError):
            return None
