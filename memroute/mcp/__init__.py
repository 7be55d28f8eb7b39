"""MCP tools over stdio (`memroute mcp`) and streamable HTTP (`/mcp` in the server)."""
