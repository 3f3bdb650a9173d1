from mcp.server.lowlevel import Server
server = Server("x")
@server.set_logging_level()
async def set_level(level): ...
@server.subscribe_resource()
async def sub(uri): ...
class Cli:
    def set_logging_level(self):  # not the SDK's decorator
        pass
