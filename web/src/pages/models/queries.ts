// The Models page's reads. Providers and models are always fetched with `include_secret=false`:
// the console never needs a provider's whole key, so the browser never holds one.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { get } from "../../api/client";
import type { Model, Provider } from "../../api/types";
import type { ModelKind, Requester } from "./types";

export const keys = {
  requesters: ["provider", "requesters"] as const,
  providers: ["provider", "providers"] as const,
  models: (kind: ModelKind) => ["provider", "models", kind] as const,
};

export function useRequesters() {
  return useQuery({
    queryKey: keys.requesters,
    queryFn: () => get<{ requesters: Requester[] }>("/provider/requesters").then((d) => d.requesters),
    // The catalogue is compiled into the server: it changes only with a new version.
    staleTime: Infinity,
  });
}

export function useProviders() {
  return useQuery({
    queryKey: keys.providers,
    queryFn: () =>
      get<{ providers: Provider[] }>("/provider/providers", { include_secret: false }).then((d) => d.providers),
  });
}

export function useModels(kind: ModelKind) {
  return useQuery({
    queryKey: keys.models(kind),
    queryFn: () =>
      get<{ models: Model[] }>(`/provider/models/${kind}`, { include_secret: false }).then((d) => d.models),
  });
}

// Providers carry model counts and models carry provider names: a change to either refreshes both.
export function useInvalidateModels() {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: keys.providers }),
      client.invalidateQueries({ queryKey: ["provider", "models"] }),
    ]);
}
