# syntax=docker/dockerfile:1
# Build stage: better-sqlite3 12 (Node.js 20's driver, installed on every line) compiles from source
# where its prebuilt binary cannot be fetched, so it needs python3, make and g++. Node.js 24 loads 13.
FROM node:24-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The client package is an npm workspace: its manifest must be there for npm ci.
COPY package.json package-lock.json ./
COPY client/package.json ./client/
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The dashboard: npm run build bundles it into dist/webui.
COPY ui ./ui
RUN npm run build && npm prune --omit=dev

# Runtime stage: no compiler, non-root, data on a volume.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    GOALKEEPER_DB=/data/goalkeeper.db \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Migrations run at start: ship the SQL and meta/_journal.json.
COPY migrations ./migrations
# Word-frequency ranks read by the enhanced drift similarity.
COPY resources ./resources
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-old-space-size=192", "--max-semi-space-size=2", "--heap-growing-percent=10", "--v8-pool-size=1", "dist/server.js"]
