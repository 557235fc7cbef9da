// Shapes of /api/v1/plugins as src/http/api/plugin_routes.cpp encodes them (EncodePlugin) and of the
// marketplace listing the server proxies from LangBot Space.
import type { I18nText, SchemaItem } from "../../api/types";

export type PluginStatus = "stopped" | "starting" | "running" | "restarting" | "failed";

export interface PluginManifest {
  label: I18nText | string;
  description: I18nText | string;
  icon: string; // a path inside the package, "" when none
  repository: string;
  config: SchemaItem[];
  network: boolean; // execution.network: the manifest asks for the network
}

export interface Plugin {
  author: string;
  name: string;
  plugin_id: string;
  version: string;
  enabled: boolean;
  priority: number;
  install_source: "marketplace" | "local" | string;
  label: I18nText | string;
  description: I18nText | string;
  manifest: PluginManifest;
  config: Record<string, unknown>;
  status: PluginStatus;
  error: string;
  restarts: number; // crashes since it was last started or enabled
  recent_crashes: number; // within the server's crash window
  sandbox: { status: string; network_requested: boolean | null; allow_network: boolean };
  capabilities: {
    events?: string[];
    commands?: { name: string; description: string }[];
    tools?: { name: string; description: string }[];
  };
  created_at: string;
  updated_at: string;
}

// One plugin of the marketplace listing. Only author and name are relied on; the rest is shown
// when the marketplace sends it.
export interface MarketplacePlugin {
  author: string;
  name: string;
  label?: I18nText | string;
  description?: I18nText | string;
  latest_version?: string;
}

export interface MarketplacePage {
  plugins: MarketplacePlugin[];
  total?: number;
  page?: number;
  page_size?: number;
}

export interface TaskStarted {
  task_id: number;
}
