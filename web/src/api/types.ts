// Shapes of the API's resources as the console reads them (docs/api.md, contract §3). Page-specific
// shapes live beside their pages; what several pages share lives here.

// LangBot's localised text: {en_US, zh_Hans, ...}.
export type I18nText = Record<string, string>;

// One item of LangBot's dynamic-form schema (adapters, requesters, pipeline metadata, plugin
// manifests): what the console turns into a field.
export interface SchemaItem {
  name: string;
  label: I18nText;
  description?: I18nText;
  type: string; // string, integer, int, float, number, boolean, select, array[string], json, text, ...
  required?: boolean;
  default?: unknown;
  secret?: boolean;
  format?: string; // "http-url"
  options?: { name: string; label: I18nText }[];
  show_if?: { field: string; operator: "eq" | "neq" | "in"; value: unknown };
  visibleOn?: string;
}

export interface Task {
  id: number;
  task_type: string;
  kind: string;
  name: string;
  label: string;
  status: "pending" | "running" | "succeeded" | "failed" | "cancelled";
  task_context: { current_action: string; log: string; metadata: Record<string, unknown> };
  runtime: { done: boolean; state: string; exception: string | null; result: unknown };
  created_at: string;
  updated_at: string;
}

export type RuntimeStatus = "stopped" | "starting" | "running" | "error";

export interface Bot {
  uuid: string;
  name: string;
  description: string;
  adapter: string;
  adapter_config: Record<string, unknown>;
  config: Record<string, unknown>;
  enable: boolean;
  use_pipeline_uuid: string | null;
  log_retention: number | null;
  runtime: { status: RuntimeStatus; error?: string; since: string };
  adapter_runtime_values?: {
    bot_account_id: string;
    webhook_url: string;
    webhook_full_url: string;
    extra_webhook_full_url: string;
  };
  created_at: string;
  updated_at: string;
}

export interface BotLogEntry {
  seq_id: number;
  timestamp: number;
  level: "debug" | "info" | "warning" | "error";
  text: string;
  images: string[];
  message_session_id: string;
  created_at: string;
}

export interface Pipeline {
  uuid: string;
  name: string;
  description: string;
  emoji: string;
  config: Record<string, Record<string, Record<string, unknown>>>;
  stages: string[];
  is_default: boolean;
  for_version: string;
  extensions_preferences: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface Provider {
  uuid: string;
  name: string;
  requester: string;
  base_url: string;
  api_keys: string[];
  llm_count: number;
  embedding_count: number;
  created_at: string;
  updated_at: string;
}

export interface Model {
  uuid: string;
  name: string;
  description: string;
  provider_uuid: string;
  requester: string;
  requester_config: { model?: string; args?: Record<string, unknown> };
  abilities?: string[];
  extra_args: Record<string, unknown>;
  dimensions?: number;
  created_at: string;
  updated_at: string;
}

export interface SystemInfo {
  version: string;
  api_version: string;
  debug: boolean;
  edition: string;
  enable_marketplace: boolean;
  cloud_service_url: string;
  allow_modify_login_info: boolean;
  wizard_status: string;
  [key: string]: unknown;
}
