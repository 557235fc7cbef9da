import type { ReactNode } from "react";

// The centred card the signed-out pages share.
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-frame">
      <div className="card auth-card">
        <p className="brand">Switchboard</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
