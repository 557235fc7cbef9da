// The pipeline pages' server reads, each under one query key so a save or delete refreshes every
// view that shows the same data.
import { useQuery } from "@tanstack/react-query";
import { get } from "../../api/client";
import type { Model, Pipeline } from "../../api/types";
import type { InstalledPlugin, PipelineMetadata } from "./types";

export const pipelineKeys = {
  all: ["pipelines"] as const,
  one: (uuid: string) => ["pipelines", uuid] as const,
  metadata: ["pipelines", "_metadata"] as const,
};

export function usePipelines() {
  return useQuery({
    queryKey: pipelineKeys.all,
    queryFn: () => get<{ pipelines: Pipeline[] }>("/pipelines").then((d) => d.pipelines),
  });
}

export function usePipeline(uuid: string) {
  return useQuery({
    queryKey: pipelineKeys.one(uuid),
    queryFn: () => get<{ pipeline: Pipeline }>(`/pipelines/${uuid}`).then((d) => d.pipeline),
  });
}

// The metadata never changes while the server runs.
export function usePipelineMetadata() {
  return useQuery({
    queryKey: pipelineKeys.metadata,
    queryFn: () => get<PipelineMetadata>("/pipelines/_/metadata"),
    staleTime: Infinity,
  });
}

// Same key and read as the Models page, so a model added there shows up here.
export function useLlmModels() {
  return useQuery({
    queryKey: ["provider", "models", "llm"],
    queryFn: () =>
      get<{ models: Model[] }>("/provider/models/llm", { include_secret: false }).then((d) => d.models),
  });
}

// Same key and read as the Plugins page.
export function useInstalledPlugins() {
  return useQuery({
    queryKey: ["plugins"],
    queryFn: () => get<{ plugins: InstalledPlugin[] }>("/plugins").then((d) => d.plugins),
  });
}
