// The knowledge pages' server reads, one query key each, so that a write refreshes every view of
// the same data (the list, a base's page, the pipeline editor's choice of bases).
import { useQuery } from "@tanstack/react-query";
import { get } from "../../api/client";
import type { Model } from "../../api/types";
import type { KnowledgeBase, KnowledgeEngine, KnowledgeFile } from "./types";

export const knowledgeKeys = {
  all: ["knowledge"] as const,
  bases: ["knowledge", "bases"] as const,
  base: (uuid: string) => ["knowledge", "bases", uuid] as const,
  files: (uuid: string) => ["knowledge", "bases", uuid, "files"] as const,
  engines: ["knowledge", "engines"] as const,
};

export const listBases = () => get<{ bases: KnowledgeBase[] }>("/knowledge/bases").then((d) => d.bases);

export function useBases() {
  return useQuery({ queryKey: knowledgeKeys.bases, queryFn: listBases });
}

export function useBase(uuid: string) {
  return useQuery({
    queryKey: knowledgeKeys.base(uuid),
    queryFn: () => get<{ base: KnowledgeBase }>(`/knowledge/bases/${uuid}`).then((d) => d.base),
  });
}

// Polled while a file is still being ingested, so its status moves on the page by itself.
export function useFiles(uuid: string, enabled = true) {
  return useQuery({
    queryKey: knowledgeKeys.files(uuid),
    enabled,
    queryFn: () => get<{ files: KnowledgeFile[] }>(`/knowledge/bases/${uuid}/files`).then((d) => d.files),
    refetchInterval: (q) =>
      (q.state.data ?? []).some((f) => f.status === "pending" || f.status === "processing") ? 1000 : false,
  });
}

// The engines and their forms are compiled into the server: they change only with a new version.
export function useEngines() {
  return useQuery({
    queryKey: knowledgeKeys.engines,
    queryFn: () => get<{ engines: KnowledgeEngine[] }>("/knowledge/engines").then((d) => d.engines),
    staleTime: Infinity,
  });
}

// Same key and read as the Models page, so a model added there shows up here.
export function useEmbeddingModels() {
  return useQuery({
    queryKey: ["provider", "models", "embedding"],
    queryFn: () =>
      get<{ models: Model[] }>("/provider/models/embedding", { include_secret: false }).then((d) => d.models),
  });
}
