"""The baseline: a bare pygls 2 server with one custom method, started like Modus (stdio)."""

from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "1")


@server.feature("bench/ping")
def ping(params):
    return {}


if __name__ == "__main__":
    server.start_io()
