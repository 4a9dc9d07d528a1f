# Production image: one image, two processes (ROLE=api or ROLE=worker).
# Node.js 24 LTS: Nudge's time-zone rules come from the tzdata in Node's ICU,
# and only a supported Node line gets those updates (take its patch releases).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
COPY migrations migrations
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY apps/api/public apps/api/public
USER node
EXPOSE 3000
CMD ["node", "dist/apps/api/src/main.js"]
