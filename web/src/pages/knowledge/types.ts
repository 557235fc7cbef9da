// Knowledge bases as the server answers them (docs/knowledge.md, LangBot 4.9.5's shapes).
import type { I18nText, SchemaItem } from "../../api/types";

export interface KnowledgeBase {
  uuid: string;
  name: string;
  description: string;
  emoji: string;
  knowledge_engine_plugin_id: string;
  creation_settings: Record<string, unknown>;
  retrieval_settings: Record<string, unknown>;
  knowledge_engine?: { plugin_id: string; name: I18nText | string };
  created_at: string;
  updated_at: string;
}

export type FileStatus = "pending" | "processing" | "completed" | "failed";

export interface KnowledgeFile {
  uuid: string;
  kb_id: string;
  file_name: string;
  extension: string;
  status: FileStatus | string;
  error: string;
  size: number;
  chunk_count: number;
  task_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeEngine {
  plugin_id: string;
  name: I18nText | string;
  description?: I18nText | string;
  creation_schema: SchemaItem[];
  retrieval_schema: SchemaItem[];
}

export interface RetrievalResult {
  id: string;
  content: { type: string; text?: string }[];
  metadata: {
    file_id?: string;
    document_name?: string;
    chunk_index?: number;
    vector_score?: number;
    keyword_score?: number;
    [key: string]: unknown;
  };
  score?: number;
  distance?: number;
}
