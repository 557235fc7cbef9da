// Shapes the Models page reads beyond the shared Provider and Model (src/llm/requesters.json as
// served by GET /provider/requesters; the test answers of docs/api.md "Model tests").
import type { I18nText, SchemaItem } from "../../api/types";

export type ModelKind = "llm" | "embedding";

export interface Requester {
  name: string;
  label: I18nText;
  description?: I18nText;
  icon?: string;
  default_base_url?: string;
  wire?: string; // "openai", "anthropic", "ollama": the protocol the server speaks; "other": none yet
  spec: {
    config: SchemaItem[];
    support_type: string[]; // "llm", "text-embedding", "rerank"
    provider_category?: string; // "manufacturer", "maas", "self-hosted"
  };
}

export interface LlmTestResult {
  latency_ms: number;
  reply: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface EmbeddingTestResult {
  latency_ms: number;
  dimensions: number;
}

export type TestResult = LlmTestResult | EmbeddingTestResult;

// What the create and edit forms send (POST/PUT /provider/models/{kind}, and the `_` test).
export interface ModelBody {
  name: string;
  description: string;
  provider_uuid: string;
  requester_config: { model: string; args: Record<string, unknown>; [key: string]: unknown };
  abilities?: string[];
  extra_args: Record<string, unknown>;
}
