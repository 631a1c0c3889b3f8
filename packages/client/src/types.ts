/** Wire shapes of api-contract.md that the client's modules return. */

export interface User {
  id: number;
  username: string;
  email: string;
  created_at: string;
  ntfy_topic?: string;
}

export interface ApiKey {
  id: number;
  user_id: number;
  name: string;
  /** Only in the answer that created the key; shown once. */
  key?: string;
  created_at: string;
  last_used_at: string | null;
}

export interface ServiceAccount {
  id: number;
  name: string;
  scope: 'instance';
  created_at: string;
}
