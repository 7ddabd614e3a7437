# syntax=docker/dockerfile:1
# Multi-stage image: the build stage compiles TypeScript and (when OpenBLAS/LAPACKE are present, which
# they are here, with CHOLMOD, SuiteSparseQR and ARPACK for its sparse part and METIS for the partition advisor) the
# optional native backend;
# the runtime stage holds production dependencies only and runs as the non-root `node` user.
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ libopenblas-dev liblapacke-dev libsuitesparse-dev libarpack2-dev libmetis-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY native ./native
# `npm ci` runs the package's install script, which builds the native addon; the image promises the
# native backend, so a failed build fails the image (REQUIRE_NATIVE_BACKEND) instead of shipping without it.
RUN REQUIRE_NATIVE_BACKEND=1 REQUIRE_NATIVE_SPARSE=1 npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# OpenBLAS/LAPACKE, CHOLMOD and SuiteSparseQR (SuiteSparse), ARPACK and METIS for the native backend (the addon links them all: one
# missing library and it does not load at all); redis-server for the all-in-one default
# (`node dist/src/main.js` without REDIS_URL). docker-compose.yml uses a separate Redis.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libopenblas0 liblapacke libcholmod3 libumfpack5 libspqr2 libsuitesparseconfig5 libarpack2 libmetis5 redis-server \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/build/Release ./native/build/Release
# DATA_DIR of the private redis-server (append-only file): writable by the node user, a volume to keep.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME /app/data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# API and one worker in one process; override the command to run only one part:
#   node dist/src/api/server.js      (API)      node dist/src/jobs/workerMain.js   (worker)
CMD ["node", "dist/src/main.js"]
