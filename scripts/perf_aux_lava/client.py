# SPDX-License-Identifier: GPL-2.0
"""A LAVA server's REST API (api/v0.2), through urllib.

The token is sent in the Authorization header and nowhere else: it is
never an argument of a command, and every message this module makes is
passed through redact(), so a server that echoes the header back does not
get it printed.  One proxy rule (opener()): the loopback never goes
through a proxy, any other lab through the environment's (http_proxy,
https_proxy, no_proxy).  A failed call is an ApiError whose message is
the one line the user reads.
"""

import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional, Tuple

API = 'api/v0.2'
TIMEOUT = 60


class ApiError(Exception):
    """A call that failed; status 0 when the server did not answer."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ''
    return host in ('localhost', '::1') or host.startswith('127.')


def opener(url: str) -> urllib.request.OpenerDirector:
    """The opener for url's server: no proxy for the loopback (a proxy of
    the environment is another address), else the environment's, whose
    no_proxy urllib honours."""
    proxies = {} if loopback(url) else urllib.request.getproxies()
    return urllib.request.build_opener(urllib.request.ProxyHandler(proxies))


def read_token(url: str, default_file: str = '') -> str:
    """The token from LAVA_TOKEN, else the file LAVA_TOKEN_FILE, else
    default_file (the local lab's); whitespace removed.  ApiError (status
    0) when there is none."""
    token = os.environ.get('LAVA_TOKEN', '')
    if not token:
        path = os.environ.get('LAVA_TOKEN_FILE', '') or default_file
        if not path:
            raise ApiError(f'no token for {url}/: set LAVA_TOKEN or '
                           'LAVA_TOKEN_FILE')
        try:
            with open(path) as f:
                token = f.read()
        except OSError:
            raise ApiError(f'cannot read the token file {path}') from None
    token = ''.join(token.split())
    if not token:
        raise ApiError(f'the token for {url}/ is empty')
    return token


def reason(body: bytes) -> str:
    """What the server said (DRF's "detail", LAVA's "message"), one line."""
    try:
        d = json.loads(body)
        if isinstance(d, dict):
            d = d.get('message') or d.get('detail') or d
        text = str(d)
    except ValueError:
        text = body[:300].decode(errors='replace')
    return ' '.join(text.split())


class Client:
    """The API of the server at url, as the token's user."""

    def __init__(self, url: str, token: str = '',
                 timeout: float = TIMEOUT) -> None:
        self.url = url.rstrip('/')
        self._token = token
        self._timeout = timeout
        self._opener = opener(self.url)

    def redact(self, text: str) -> str:
        return text.replace(self._token, '<token>') if self._token else text

    def _error(self, status: int, path: str, body: bytes) -> ApiError:
        why = reason(body)
        if status in (401, 403):
            msg = f'{self.url}/ refused the token (HTTP {status}: {why})'
        else:
            msg = f'{self.url}/{API}/{path}: HTTP {status}: {why}'
        return ApiError(self.redact(msg), status)

    def request(self, method: str, path: str,
                data: Optional[Dict[str, Any]] = None) -> Tuple[int, bytes]:
        """(HTTP status, body) of one call; ApiError (status 0) when the
        server does not answer."""
        headers = {'Accept': 'application/json'}
        if self._token:
            headers['Authorization'] = f'Token {self._token}'
        body = None
        if data is not None:
            body = json.dumps(data).encode()
            headers['Content-Type'] = 'application/json'
        req = urllib.request.Request(f'{self.url}/{API}/{path}', data=body,
                                     headers=headers, method=method)
        try:
            with self._opener.open(req, timeout=self._timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, e.read()
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            why = getattr(e, 'reason', e)
            raise ApiError(self.redact(f'{self.url}/ unreachable: {why}')) \
                from None

    def get(self, path: str) -> bytes:
        """GET path's body; ApiError unless HTTP 200."""
        status, body = self.request('GET', path)
        if status != 200:
            raise self._error(status, path, body)
        return body

    def json(self, path: str) -> Any:
        try:
            return json.loads(self.get(path))
        except ValueError:
            raise ApiError(f'{self.url}/{API}/{path}: not JSON') from None

    def submit(self, definition: str, what: str) -> int:
        """POSTs a job definition; its id.  A refusal is an ApiError with
        the server's reason (what: the job's file)."""
        status, body = self.request('POST', 'jobs/', {'definition':
                                                      definition})
        if status == 201:
            return int(json.loads(body)['job_ids'][0])
        if status == 400:
            raise ApiError(self.redact(f'{self.url}/ refused {what} '
                                       f'(HTTP 400): {reason(body)}'), 400)
        raise self._error(status, 'jobs/', body)

    def cancel(self, job: int) -> None:
        """Asks for job to be canceled; what the server answers is not
        waited for (the job's state says it)."""
        try:
            self.request('GET', f'jobs/{job}/cancel/')
        except ApiError:
            pass

    def job(self, job: int) -> Dict[str, Any]:
        return self.json(f'jobs/{job}/')

    def log(self, job: int) -> bytes:
        return self.get(f'jobs/{job}/logs/')
