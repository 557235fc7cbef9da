// Every console page and its path. Paths are chosen so that none lives under /bots/<something>
// (the platforms' webhook routes) or /api/: a bot's own page is /bot/<uuid>.
import { lazy } from "react";

export const navItems = [
  { to: "/", label: "nav.dashboard" },
  { to: "/bots", label: "nav.bots" },
  { to: "/pipelines", label: "nav.pipelines" },
  { to: "/models", label: "nav.models" },
  { to: "/knowledge", label: "nav.knowledge" },
  { to: "/plugins", label: "nav.plugins" },
  { to: "/mcp", label: "nav.mcp" },
  { to: "/webhooks", label: "nav.webhooks" },
  { to: "/apikeys", label: "nav.apikeys" },
  { to: "/system", label: "nav.system" },
] as const;

// Each page group is its own chunk, loaded on first visit, so the first load stays small; the
// dashboard, where every visit lands, comes with the first load instead of a round trip later.
export { default as DashboardPage } from "../pages/dashboard/DashboardPage";
export const BotsPage = lazy(() => import("../pages/bots/BotsPage"));
export const BotPage = lazy(() => import("../pages/bots/BotPage"));
export const PipelinesPage = lazy(() => import("../pages/pipelines/PipelinesPage"));
export const PipelineEditorPage = lazy(() => import("../pages/pipelines/PipelineEditorPage"));
export const DebugChatPage = lazy(() => import("../pages/pipelines/DebugChatPage"));
export const ModelsPage = lazy(() => import("../pages/models/ModelsPage"));
export const KnowledgePage = lazy(() => import("../pages/knowledge/KnowledgePage"));
export const KnowledgeBasePage = lazy(() => import("../pages/knowledge/KnowledgeBasePage"));
export const PluginsPage = lazy(() => import("../pages/plugins/PluginsPage"));
export const PluginPage = lazy(() => import("../pages/plugins/PluginPage"));
export const McpPage = lazy(() => import("../pages/mcp/McpPage"));
export const WebhooksPage = lazy(() => import("../pages/webhooks/WebhooksPage"));
export const ApiKeysPage = lazy(() => import("../pages/apikeys/ApiKeysPage"));
export const SystemPage = lazy(() => import("../pages/system/SystemPage"));
