#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 proxy between tpuci and a Docker Engine.

    faultproxy.py LISTEN_SOCKET ENGINE_SOCKET [RULE ...]

Listens on the unix socket LISTEN_SOCKET and forwards every request to
the engine at ENGINE_SOCKET, one upstream connection per client
connection, request by request (so that rules see each request even on
kept-alive connections). A RULE is ACTION:METHOD:REGEX, applied to the
first request whose method is METHOD and whose path matches REGEX
(re.search), to the first N with ACTION=N, or to every such request with
ACTION* (e.g. hang*):

  hang           never answer; keep the connection open until the client
                 closes it
  drop-response  forward the request, read the engine's whole answer,
                 then close the client's connection without a byte
  no-oom         forward the answer with "OOMKilled":true made false (an
                 engine that missed an OOM kill; the body is re-sent with
                 a Content-Length)

Every request is logged to stderr as "proxy: METHOD PATH -> what".
A streamed answer without a length (attach, events) is relayed both ways
until either side closes.
"""
import os
import re
import socket
import sys
import threading


def log(msg):
    sys.stderr.write("proxy: %s\n" % msg)
    sys.stderr.flush()


class Rule:
    def __init__(self, text):
        action, method, regex = text.split(":", 2)
        self.left = -1 if action.endswith("*") else 1
        action = action.rstrip("*")
        if "=" in action:
            action, n = action.split("=")
            self.left = int(n)
        self.action = action
        if self.action not in ("hang", "drop-response", "no-oom"):
            raise SystemExit("unknown action %r" % self.action)
        self.method = method
        self.regex = re.compile(regex)
        self.lock = threading.Lock()

    def take(self, method, path):
        if method != self.method or not self.regex.search(path):
            return False
        with self.lock:
            if self.left == 0:
                return False
            self.left -= 1
            return True


class Conn:
    """A buffered reader over a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n:
            self.fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def head(self):
        first = self.line()
        headers = []
        while True:
            h = self.line()
            if h == b"":
                return first, headers
            headers.append(h)


def header(headers, name):
    name = name.lower()
    for h in headers:
        k, _, v = h.partition(b":")
        if k.strip().lower() == name.encode():
            return v.strip().decode("latin-1")
    return None


def message(conn, first, headers, is_response, method=None, sink=None):
    """The whole message as bytes, or (bytes_of_head, None) when the body
    is delimited by the connection's end. With `sink`, a chunked body is
    passed to it chunk by chunk as it comes (a stream such as stats) and
    what is returned is only what was not passed yet."""
    raw = first + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"
    length = header(headers, "content-length")
    chunked = (header(headers, "transfer-encoding") or "").lower() == "chunked"
    if is_response:
        status = int(first.split()[1])
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return raw, False
    if chunked:
        while True:
            size_line = conn.line()
            raw += size_line + b"\r\n"
            size = int(size_line.split(b";")[0], 16)
            raw += conn.exactly(size + 2)
            if size == 0:
                return raw, False
            if sink is not None:
                sink(raw)
                raw = b""
    if length is not None:
        return raw + conn.exactly(int(length)), False
    if is_response:
        return raw, True
    return raw, False


def without_oom(resp):
    """The whole answer `resp` (bytes) with OOMKilled true made false,
    its body de-chunked and sent with a Content-Length."""
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if (header(lines[1:], "transfer-encoding") or "").lower() == "chunked":
        plain = b""
        while True:
            size_line, _, body = body.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            plain += body[:size]
            body = body[size + 2:]
        body = plain
    body = body.replace(b'"OOMKilled":true', b'"OOMKilled":false')
    keep = [h for h in lines[1:] if h.split(b":")[0].strip().lower()
            not in (b"transfer-encoding", b"content-length")]
    keep.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join([lines[0]] + keep) + b"\r\n\r\n" + body


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, engine_path, rules):
    c = Conn(client)
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    up.connect(engine_path)
    u = Conn(up)
    try:
        while True:
            try:
                first, headers = c.head()
            except EOFError:
                return
            req, _ = message(c, first, headers, False)
            method, path = first.decode("latin-1").split()[:2]
            rule = next((r for r in rules if r.take(method, path)), None)
            if rule is not None and rule.action == "hang":
                log("%s %s -> hang" % (method, path))
                try:
                    while client.recv(65536):
                        pass
                except OSError:
                    pass
                log("%s %s -> the client went away" % (method, path))
                return
            up.sendall(req)
            rfirst, rheaders = u.head()
            whole = rule is not None and rule.action in ("drop-response", "no-oom")
            resp, open_ended = message(u, rfirst, rheaders, True, method,
                                       None if whole else client.sendall)
            if rule is not None and rule.action == "drop-response":
                log("%s %s -> %s, dropped" % (method, path, rfirst.decode("latin-1")))
                return
            if rule is not None and rule.action == "no-oom" and not open_ended:
                resp = without_oom(resp)
                log("%s %s -> %s, OOMKilled hidden" % (method, path, rfirst.decode("latin-1")))
            else:
                log("%s %s -> %s" % (method, path, rfirst.decode("latin-1")))
            client.sendall(resp)
            if open_ended:
                # A hijacked or close-delimited stream: relay both ways.
                if u.buf:
                    client.sendall(u.buf)
                    u.buf = b""
                if c.buf:
                    up.sendall(c.buf)
                    c.buf = b""
                t = threading.Thread(target=pump, args=(client, up), daemon=True)
                t.start()
                pump(up, client)
                return
    except (EOFError, OSError):
        return
    finally:
        for s in (client, up):
            try:
                s.close()
            except OSError:
                pass


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    listen, engine = sys.argv[1], sys.argv[2]
    rules = [Rule(r) for r in sys.argv[3:]]
    try:
        os.unlink(listen)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(listen)
    srv.listen(128)
    log("listening on %s for %s" % (listen, engine))
    while True:
        client, _ = srv.accept()
        threading.Thread(target=serve, args=(client, engine, rules), daemon=True).start()


if __name__ == "__main__":
    main()
