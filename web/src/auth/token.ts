// Where the user token lives between visits. localStorage, because the console is one origin and
// the token is also needed for the debug chat's WebSocket URL.
const KEY = "switchboard.token";
type Listener = (token: string | null) => void;
const listeners = new Set<Listener>();

export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string): void {
  localStorage.setItem(KEY, token);
  listeners.forEach((l) => l(token));
}

export function clearToken(): void {
  if (getToken() === null) return;
  localStorage.removeItem(KEY);
  listeners.forEach((l) => l(null));
}

export function onTokenChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
