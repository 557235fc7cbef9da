// Who is signed in. The token comes from localStorage; the server is asked whether an admin exists
// (first run) and who the token belongs to. An expired or revoked token sends the person to the
// login page exactly once: the token is cleared before the redirect, so nothing loops.
import { QueryClient, useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { Navigate, useLocation } from "react-router";
import { api, onUnauthorized } from "../api/client";
import { clearToken, getToken, onTokenChange, setToken } from "./token";

interface AccountInfo {
  initialized: boolean;
}

interface AuthState {
  token: string | null;
  user: string | null;
  login: (user: string, password: string) => Promise<void>;
  logout: () => void;
  // Set when the last session ended because the server refused the token.
  expired: boolean;
}

const AuthContext = createContext<AuthState | null>(null);

// Drops everything read with the old session, except whether an admin exists: a query removed
// under a mounted observer stays pending, and the sign-in gate must keep its answer.
function forgetSignedInData(queryClient: QueryClient) {
  queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== "account-info" });
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [token, setTokenState] = useState(getToken);
  const [expired, setExpired] = useState(false);
  useEffect(() => onTokenChange(setTokenState), []);
  useEffect(
    () =>
      onUnauthorized(() => {
        setExpired(true);
        forgetSignedInData(queryClient);
      }),
    [queryClient],
  );
  const userQuery = useQuery({
    queryKey: ["user-info", token],
    queryFn: () => api<{ user: string }>("/user/info"),
    enabled: token !== null,
    staleTime: Infinity,
    retry: false,
  });
  const value = useMemo<AuthState>(
    () => ({
      token,
      user: userQuery.data?.user ?? null,
      expired,
      login: async (user, password) => {
        const data = await api<{ token: string }>("/user/auth", {
          method: "POST",
          body: { user, password },
          anonymous: true,
        });
        setExpired(false);
        setToken(data.token);
      },
      logout: () => {
        clearToken();
        forgetSignedInData(queryClient);
      },
    }),
    [token, userQuery.data, expired, queryClient],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error("useAuth outside AuthProvider");
  return ctx;
}

export function useAccountInfo() {
  return useQuery({
    queryKey: ["account-info"],
    queryFn: () => api<AccountInfo>("/user/account-info", { anonymous: true }),
    staleTime: 60_000,
  });
}

// Pages behind a login: no token goes to /login, remembering where to return.
export function RequireAuth({ children }: { children: ReactNode }) {
  const { token } = useAuth();
  const location = useLocation();
  // Without a token the login page decides (it sends a first run on to /setup). With one, an
  // account exists by definition and the page starts at once, without a round trip first; a token
  // the server no longer takes ends at the first request (onUnauthorized).
  if (!token) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return <>{children}</>;
}
