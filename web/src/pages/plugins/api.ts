// The plugin calls of the console and their query keys, so every view of a plugin refreshes together.
import { api, ApiError, apiUrl, del, get, post, put } from "../../api/client";
import { getToken } from "../../auth/token";
import type { MarketplacePage, Plugin, TaskStarted } from "./types";

// Everything under "plugins" is the live state (list and each plugin), refreshed together after any
// change; config and readme are keyed apart so a refresh never redraws a form being typed in.
export const pluginKeys = {
  all: ["plugins"] as const,
  list: ["plugins", "list"] as const,
  one: (author: string, name: string) => ["plugins", "one", author, name] as const,
  config: (author: string, name: string, version: string) => ["plugin-config", author, name, version] as const,
  readme: (author: string, name: string, version: string) => ["plugin-readme", author, name, version] as const,
  marketplace: (page: number, pageSize: number) => ["plugins-marketplace", page, pageSize] as const,
};

const path = (author: string, name: string) => `/plugins/${encodeURIComponent(author)}/${encodeURIComponent(name)}`;

export const listPlugins = () => get<{ plugins: Plugin[] }>("/plugins").then((d) => d.plugins);
export const getPlugin = (author: string, name: string) =>
  get<{ plugin: Plugin }>(path(author, name)).then((d) => d.plugin);
export const getReadme = (author: string, name: string) =>
  get<{ readme: string }>(`${path(author, name)}/readme`).then((d) => d.readme);
export const getConfig = (author: string, name: string) =>
  get<{ config: Record<string, unknown> }>(`${path(author, name)}/config`).then((d) => d.config);
export const setEnabled = (author: string, name: string, enabled: boolean) =>
  put(`${path(author, name)}/enabled`, { enabled });
export const setNetworkAllowed = (author: string, name: string, allow: boolean) =>
  put(`${path(author, name)}/sandbox`, { allow_network: allow });
export const saveConfig = (author: string, name: string, config: Record<string, unknown>) =>
  put(`${path(author, name)}/config`, { config });
export const upgradePlugin = (author: string, name: string) => post<TaskStarted>(`${path(author, name)}/upgrade`);
export const deletePlugin = (author: string, name: string) => del<TaskStarted>(path(author, name));
export const installFromMarketplace = (author: string, name: string) =>
  post<TaskStarted>("/plugins/install/marketplace", { plugin_id: `${author}/${name}` });
export const listMarketplace = (page: number, pageSize: number) =>
  get<MarketplacePage>("/plugins/marketplace", { page, page_size: pageSize });

// The icon needs the bearer token, so an <img src> cannot load it: fetch the bytes and hand back an
// object URL (the caller revokes it).
export async function fetchIconUrl(author: string, name: string, signal?: AbortSignal): Promise<string> {
  const headers: Record<string, string> = {};
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(apiUrl(`${path(author, name)}/icon`), { headers, signal });
  if (!response.ok) throw new ApiError(response.status, `${response.status} ${response.statusText}`);
  return URL.createObjectURL(await response.blob());
}

// A package upload with the bytes' progress, which fetch() cannot report: XMLHttpRequest with the same
// token and the same envelope handling as api().
export function uploadPackage(file: File, onProgress: (sent: number, total: number) => void): Promise<TaskStarted> {
  const form = new FormData();
  form.append("file", file, file.name);
  if (typeof XMLHttpRequest === "undefined") return api<TaskStarted>("/plugins/install/local", { body: form });
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", apiUrl("/plugins/install/local"));
    xhr.setRequestHeader("Accept", "application/json");
    const token = getToken();
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () => reject(new ApiError(0, "The server cannot be reached. Is Switchboard running?"));
    xhr.onload = () => {
      let envelope: { code?: number; msg?: string; data?: unknown } | undefined;
      try {
        envelope = JSON.parse(xhr.responseText);
      } catch {
        envelope = undefined;
      }
      const failed = xhr.status < 200 || xhr.status >= 300 || (envelope?.code !== undefined && envelope.code !== 0);
      if (failed) {
        // The token was refused: let the client's own check end the session, once, as it does elsewhere.
        if (xhr.status === 401) void api("/user/info").catch(() => undefined);
        reject(new ApiError(xhr.status, envelope?.msg || `${xhr.status} ${xhr.statusText}`.trim(), envelope?.code ?? -1));
      } else {
        resolve(envelope?.data as TaskStarted);
      }
    };
    xhr.send(form);
  });
}

// Poll faster while a process is changing state, so "starting" turns into its outcome promptly.
export function pluginPollInterval(plugins: Plugin[] | undefined): number {
  return plugins?.some((p) => p.status === "starting" || p.status === "restarting") ? 1500 : 5000;
}
