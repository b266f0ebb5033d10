for (const m of process.argv.slice(2)) { await import(m); }
