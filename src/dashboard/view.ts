/** A page of the dashboard: opened with the route's query, closed (streams aborted) when the user leaves it. */
export interface View {
  open(query: URLSearchParams): Promise<void>;
  close(): void;
}
