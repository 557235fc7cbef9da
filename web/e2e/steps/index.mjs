// The steps in the order they run; `needs` names the steps whose result a step builds on (it is
// skipped when one of them failed, and `--only` runs them first).
import { changePassword, logoutLogin, setupAdmin } from "./auth.mjs";
import { apiKey } from "./apikeys.mjs";
import { dashboardMonitoring } from "./dashboard.mjs";
import { webhookBot } from "./bots.mjs";
import { knowledgeBase } from "./knowledge.mjs";
import { mcpBinding, mcpDelete, mcpServer } from "./mcp.mjs";
import { providerAndModel } from "./models.mjs";
import { debugChat, pipelineEdit } from "./pipelines.mjs";
import { pluginMarketplace, pluginZip } from "./plugins.mjs";
import { errorStates, keyboard } from "./people.mjs";
import { language, recoveryReset, sessionExpired } from "./resilience.mjs";
import { tourDark, tourLight, tourPhone } from "./tour.mjs";
import { outgoingWebhook } from "./webhooks.mjs";

export const steps = [
  { name: "setup", run: setupAdmin },
  { name: "login", needs: ["setup"], run: logoutLogin },
  { name: "models", needs: ["login"], run: providerAndModel },
  { name: "pipeline", needs: ["models"], run: pipelineEdit },
  { name: "debug-chat", needs: ["pipeline"], run: debugChat },
  { name: "webhook-bot", needs: ["pipeline"], run: webhookBot },
  { name: "dashboard-monitoring", needs: ["webhook-bot"], run: dashboardMonitoring },
  { name: "webhooks", needs: ["webhook-bot"], run: outgoingWebhook },
  { name: "knowledge", needs: ["pipeline"], run: knowledgeBase },
  { name: "mcp", needs: ["login"], run: mcpServer },
  { name: "mcp-binding", needs: ["mcp", "pipeline"], run: mcpBinding },
  { name: "plugin", needs: ["login"], run: pluginZip },
  { name: "marketplace", needs: ["plugin"], run: pluginMarketplace },
  { name: "apikey", needs: ["login"], run: apiKey },
  { name: "tour-light", needs: ["login"], run: tourLight },
  { name: "tour-dark", needs: ["login"], run: tourDark },
  { name: "tour-phone", needs: ["login"], run: tourPhone },
  // After the tour, so that it shows (and checks) the MCP page with a server on it.
  { name: "mcp-delete", needs: ["mcp-binding"], run: mcpDelete },
  { name: "keyboard", needs: ["login"], run: keyboard },
  { name: "error-states", needs: ["login"], run: errorStates },
  { name: "language", needs: ["login"], run: language },
  { name: "session-expired", needs: ["login"], run: sessionExpired },
  { name: "recovery-reset", needs: ["login"], run: recoveryReset },
  { name: "password", needs: ["login"], run: changePassword },
];
