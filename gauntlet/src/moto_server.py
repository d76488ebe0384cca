"""moto's server, answering one request at a time.

`moto_server` serves each connection on its own thread, but moto's backends
are plain dictionaries with no locking: under concurrent requests a read
that iterates one (SSM's DescribeParameters) fails with "dictionary changed
size during iteration", and a write that fails this way after storing its
object (a PutParameter) makes the AWS SDK retry it, and the retry fails with
ParameterAlreadyExists. This runs the same application as `moto_server`,
with its arguments, and serializes the application calls; connections are
still accepted and read concurrently.
"""

import sys
import threading

from moto import server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

_lock = threading.Lock()
_call = DomainDispatcherApplication.__call__


def _serialized(self, environ, start_response):
    with _lock:
        # moto answers with whole bodies; read them while holding the lock.
        return list(_call(self, environ, start_response))


DomainDispatcherApplication.__call__ = _serialized

if __name__ == "__main__":
    server.main(sys.argv[1:])
