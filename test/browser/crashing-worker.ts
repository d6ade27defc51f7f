// A worker whose script fails at start-up: the rpc client must report it, not wait for replies.
throw new Error("storage worker failed to start");
