import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SetLevelRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
const server = new Server({ name: "x", version: "1" }, { capabilities: { logging: {} } });
server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {});
const p = SetLevelRequestParamsSchema; // a params schema is not the method
