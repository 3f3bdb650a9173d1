// A 2025-11-25 server, as teams have them today.
server.setRequestHandler("initialize", async (req) => ({ protocolVersion: "2025-11-25" }));
server.setNotificationHandler('notifications/initialized', () => {});
const sid = req.headers["mcp-session-id"];
if (!found) throw new McpError(-32002, "Resource not found");
server.setRequestHandler("logging/setLevel", setLevel);
server.setRequestHandler("resources/subscribe", subscribe);
// The word initialize in a comment is not a finding.
