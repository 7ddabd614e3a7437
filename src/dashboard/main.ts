/**
 * The dashboard's entry point: a hash router over its pages (#/ jobs and studies, #/new, #/jobs/{id},
 * #/studies (the same list, studies only), #/studies/{id}), so the service serves one static page and every route works on reload, and the
 * API key dialog. Everything it shows comes from the public API under /v1.
 */
import './styles.css';
import { ApiClient } from './apiClient.js';
import { ActivityListView } from './activityList.js';
import { JobPageView } from './jobPage.js';
import { StudyPageView } from './studyPage.js';
import { SubmitFormView } from './submitForm.js';
import type { View } from './view.js';

const api = new ApiClient();
const main = document.getElementById('main')!;
let current: View | null = null;

function route(): void {
  current?.close();
  const [path, queryString] = location.hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(queryString ?? '');
  const segments = (path || '/').split('/').filter(Boolean);
  let section = 'jobs';
  if (segments[0] === 'new') {
    current = new SubmitFormView(api, main);
    section = 'new';
  } else if (segments[0] === 'jobs' && segments[1]) current = new JobPageView(api, main, decodeURIComponent(segments[1]));
  else if (segments[0] === 'studies') {
    current = segments[1] ? new StudyPageView(api, main, decodeURIComponent(segments[1])) : new ActivityListView(api, main, 'study');
    section = 'studies';
  } else {
    current = new ActivityListView(api, main);
    if (query.get('kind') === 'study') section = 'studies';
  }
  for (const link of document.querySelectorAll<HTMLAnchorElement>('[data-nav]'))
    if (link.dataset.nav === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  void current.open(query);
  main.focus({ preventScroll: true });
}

function setUpKeyDialog(): void {
  const dialog = document.getElementById('api-key-dialog') as HTMLDialogElement;
  const input = document.getElementById('api-key-input') as HTMLInputElement;
  const reason = document.getElementById('api-key-reason')!;
  const defaultReason = reason.textContent ?? '';
  const button = document.getElementById('api-key-button')!;
  const refresh = (): void => {
    button.textContent = api.apiKey ? 'API key: set' : 'API key';
  };
  const open = (message?: string): void => {
    reason.textContent = message ?? defaultReason;
    input.value = api.apiKey ?? '';
    dialog.returnValue = '';
    if (!dialog.open) dialog.showModal();
  };
  button.addEventListener('click', () => open());
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'save') api.apiKey = input.value.trim() || null;
    else if (dialog.returnValue === 'forget') api.apiKey = null;
    refresh();
    if (dialog.returnValue === 'save' || dialog.returnValue === 'forget') route();
  });
  api.onUnauthorized = (problem) => open(`${problem.title}: ${problem.detail} Enter an API key to continue.`);
  refresh();
}

setUpKeyDialog();
addEventListener('hashchange', route);
route();
